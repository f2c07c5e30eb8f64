// Package dgram defines the datagram a sans-IO QUIC connection exchanges
// with whatever drives it: the real-time loop of package quic, the
// simulator harness coresim, the tests. It is a package of its own, below
// the connection (quic/internal/core calls it core.Datagram), so that a
// driver that must not import the connection, as coresim must not for
// core's own tests to use it, still names the same type.
package dgram

import (
	"net/netip"

	"github.com/satquic/satquic/internal/ecn"
)

// Datagram is one UDP datagram between a connection and its peer.
type Datagram struct {
	// Addr is the peer: where a received datagram came from, where a
	// datagram to send goes.
	Addr netip.AddrPort
	// Data is the UDP payload.
	Data []byte
	// ECN is the codepoint of the IP header (RFC 3168 section 5): the one
	// a received datagram arrived with (ecn.NotECT when the socket cannot
	// tell), the one to send a datagram with.
	ECN ecn.Codepoint
}
