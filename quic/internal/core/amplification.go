package core

// amplification is a server's anti-amplification limit (RFC 9000 section
// 8.1): until the client's address is validated, the server sends at most
// three times the bytes it received from it. A client's address needs no
// validation from its own point of view, so a client starts validated.
type amplification struct {
	// validated: the limit no longer applies (a Handshake packet, or a
	// token, proved the address).
	validated bool
	// received and sent count the datagram bytes while the limit holds.
	received, sent uint64
	// limited: the limit blocks a full datagram, as last told to loss
	// recovery, which arms no probe timeout meanwhile (RFC 9002 section
	// 6.2.2.1).
	limited bool
}

// onReceived counts a datagram of n bytes from the peer.
func (a *amplification) onReceived(n int) {
	if !a.validated {
		a.received += uint64(n)
	}
}

// onSent counts a datagram of n bytes sent to the peer.
func (a *amplification) onSent(n int) {
	if !a.validated {
		a.sent += uint64(n)
	}
}

// allows reports whether n more bytes may be sent.
func (a *amplification) allows(n uint64) bool {
	return a.validated || a.sent+n <= 3*a.received
}

// budget is how many bytes may still be sent: all of them once the address
// is validated.
func (a *amplification) budget() uint64 {
	if a.validated {
		return ^uint64(0)
	}
	return 3*a.received - min(a.sent, 3*a.received)
}

// limit caps a datagram size to what may still be sent: 0 when the budget
// is spent.
func (a *amplification) limit(size int) int {
	if a.validated {
		return size
	}
	allowed := 3 * a.received
	if a.sent >= allowed {
		return 0
	}
	return int(min(uint64(size), allowed-a.sent))
}

// validate lifts the limit for good.
func (a *amplification) validate() {
	a.validated = true
	a.limited = false
}

// setLimited records whether the limit blocks a full datagram and reports
// whether that changed, for loss recovery to be told.
func (a *amplification) setLimited(limited bool) bool {
	if limited == a.limited {
		return false
	}
	a.limited = limited
	return true
}
