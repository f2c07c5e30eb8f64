package core

import "time"

// A server's handshake is confirmed as it processes the client's Finished
// (RFC 9001 section 4.1.2), and it must then discard its Handshake keys
// (section 4.9.2). Discarding them at once would leave the packet that
// carried the Finished unacknowledged: the client would keep it in flight,
// without an RTT sample, until HANDSHAKE_DONE arrives, and would probe the
// Handshake space if that is late. The server therefore keeps the keys for
// exactly one more datagram, the one that carries the ACK of that packet
// (sent at once, section 13.2.1) beside HANDSHAKE_DONE, and discards them
// as soon as it is built. Nothing but that acknowledgement is sent with
// them.

// discardHandshakeAfterAck discards the Handshake keys at now, once the
// datagram acknowledging the client's Finished was built (hsDiscardPending,
// set by confirmHandshake).
func (c *Conn) discardHandshakeAfterAck(now time.Duration) {
	if !c.hsDiscardPending {
		return
	}
	c.hsDiscardPending = false
	c.dropSpace(now, spaceHandshake)
}
