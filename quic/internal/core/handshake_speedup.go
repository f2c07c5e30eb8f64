package core

import "github.com/satquic/satquic/quic/internal/recovery"

// RFC 9002 section 6.2.3, speeding up handshake completion: an
// ack-eliciting Initial or Handshake packet that brings no new CRYPTO data
// (CRYPTO data sent again, or a PING) is the peer's probe, so the peer is
// missing something of this endpoint's flight, or an acknowledgement of
// it. Instead of waiting for its own probe timeout, which backs off
// exponentially, the endpoint sends its unacknowledged CRYPTO data at once,
// a limited number of times per connection (the amplification limit still
// applies to a server). On a lossy path this keeps the handshake alive: a
// client whose Finished was lost answers each of the server's
// retransmissions with it, and a server whose flight was lost answers each
// of the client's probes with it, rather than going quiet for seconds of
// backoff while the peer, which hears nothing it lacks, gives up (quic-go
// ends a handshake after 5 s without a packet, and after 10 s in all).
//
// What the peer misses depends on the role. A server that sends its
// flight has the client's Initial data: the client resends only its
// Handshake data (the Finished), not its ClientHello. A client that probes
// has not got (or not acknowledged) the server's flight: the server
// resends its Initial and Handshake data.

// maxEarlyCryptoResends bounds the early resends per connection. One
// recovers a single loss (section 6.2.3); a few more carry a handshake
// through the runs of loss of a 30% lossy path. Each answers a probe of
// the peer, whose probe timeout backs off, so they cannot become a flood.
const maxEarlyCryptoResends = 5

// handshakeSpeedup is an endpoint's early resends of CRYPTO data.
type handshakeSpeedup struct {
	resends int // early resends so far
}

// onPeerProbe resends the unacknowledged CRYPTO data the peer may be
// missing, after a packet of the peer's that looked like a probe: a
// client's Handshake data, a server's Initial and Handshake data.
func (h *handshakeSpeedup) onPeerProbe(spaces *[numSpaces]*pnSpace, isClient bool) {
	if h.resends >= maxEarlyCryptoResends {
		return
	}
	which := []recovery.Space{spaceInitial, spaceHandshake}
	if isClient {
		which = which[1:]
	}
	resent := false
	for _, s := range which {
		sp := spaces[s]
		if sp.discarded || sp.write == nil || sp.cryptoSend.next == sp.cryptoSend.ackedTo {
			continue
		}
		sp.cryptoSend.requeueUnacked()
		resent = true
	}
	if resent {
		h.resends++
	}
}
