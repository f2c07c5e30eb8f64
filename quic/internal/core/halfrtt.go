package core

import "github.com/satquic/satquic/quic/internal/recovery"

// A server has its 1-RTT write keys as soon as it sent its handshake
// flight, a round trip before the client's Finished completes its
// handshake. RFC 9001 section 4.1.1 lets it send application data with
// them meanwhile (0.5-RTT data): the response to a request that came in
// 0-RTT packets then leaves with the server's flight and reaches the
// client with it, one round trip earlier, which on a GEO path is 600 ms.
// The client holds those packets until it has read the flight (RFC 9001
// section 5.7) and acknowledges them once its handshake completes.
//
// Only a server that accepted 0-RTT does so: it has requests to answer. In
// a 1-RTT handshake the client asked nothing yet, and data the server
// pushes early only shifts its first round trips against the client's
// initial flow control windows (a 100 MB download over geo-large hit the
// stream window a round trip earlier, was application limited for a round
// trip, and took 7.6 s instead of 6.4 s).
//
// Before the client's address is validated the server may send only three
// times what it received (RFC 9000 section 8.1). Stream data must not
// spend the part of that budget a retransmission of the handshake flight
// needs, or a lost flight would wait for the client's next datagram: the
// unacknowledged handshake data keeps whole datagrams in reserve.

// maySendStreams reports whether stream data may be sent now: at a client
// after its handshake completed or as 0-RTT data; at a server once its
// handshake completed, or before that within the half-RTT budget.
func (c *Conn) maySendStreams() bool {
	switch {
	case c.handshakeComplete, c.early.sending():
		return true
	case c.isClient || c.appWrite == nil:
		return false
	}
	return c.early.halfRTTAllowed(&c.amp, &c.spaces, c.maxDatagram)
}

// halfRTTAllowed reports whether a server that has its 1-RTT keys but not
// yet the client's Finished may send stream data: only after it accepted
// 0-RTT, and while the anti-amplification budget beyond the handshake's
// reserve holds a full datagram.
func (e *earlyState) halfRTTAllowed(amp *amplification, spaces *[numSpaces]*pnSpace, maxDatagram int) bool {
	if !e.accepted {
		return false
	}
	return amp.validated || amp.allows(handshakeReserve(spaces)+uint64(maxDatagram))
}

// handshakeReserve is the anti-amplification budget a server keeps for
// sending its unacknowledged handshake data again: whole datagrams,
// because a datagram with an ack-eliciting Initial is padded to 1200 bytes
// (RFC 9000 section 14.1).
func handshakeReserve(spaces *[numSpaces]*pnSpace) uint64 {
	var crypto uint64
	for _, s := range []recovery.Space{spaceInitial, spaceHandshake} {
		if sp := spaces[s]; !sp.discarded {
			crypto += sp.cryptoSend.buffered()
		}
	}
	if crypto == 0 {
		return 0
	}
	// CRYPTO data a 1200-byte datagram carries beside the headers,
	// frame headers and AEAD tags of its Initial and Handshake packets.
	const perDatagram = minInitialDatagram - 150
	return (crypto + perDatagram - 1) / perDatagram * minInitialDatagram
}

// HalfRTTReady reports, at a server, that its 1-RTT write keys are
// installed: it has built its handshake flight, reads the client's 0-RTT
// packets if it accepted them, and may answer with 0.5-RTT data (RFC 9001
// section 4.1.1). A driver that hands connections to the application
// before the handshake completes (an early accept) does so from then on.
func (c *Conn) HalfRTTReady() bool { return !c.isClient && c.appWrite != nil }
