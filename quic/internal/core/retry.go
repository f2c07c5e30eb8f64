package core

import "github.com/satquic/satquic/quic/internal/wire"

// retryState is a connection's part of address validation with Retry
// (RFC 9000 sections 8.1.2 and 17.2.5).
type retryState struct {
	// done: a client accepted a Retry (only one is, section 17.2.5.2);
	// a server's client answered one.
	done bool
	// scid is the Source Connection ID of the Retry packet: the
	// Destination Connection ID of the Initials that follow it.
	scid wire.ConnectionID
}

// initialDCID is the Destination Connection ID that keys the Initial
// packets (RFC 9001 section 5.2): the client's first one, or after a
// Retry the one the Retry chose.
func (c *Conn) initialDCID() wire.ConnectionID {
	if c.retry.done {
		return c.retry.scid
	}
	return c.origDCID
}
