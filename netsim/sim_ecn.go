package netsim

import (
	"net/netip"
	"time"

	"github.com/satquic/satquic/internal/ecn"
)

// ECN is the two-bit ECN field of a datagram's IP header (RFC 3168 section
// 5): what an endpoint sends a datagram with, and what it arrives with. It
// is the codepoint type of the whole module, so that a QUIC connection
// driven over the simulator hands codepoints in and out unconverted.
type ECN = ecn.Codepoint

// The ECN codepoints, by their value in the IP header.
const (
	NotECT = ecn.NotECT // not ECN-capable transport
	ECT1   = ecn.ECT1   // ECN-capable transport, ECT(1)
	ECT0   = ecn.ECT0   // ECN-capable transport, ECT(0)
	CE     = ecn.CE     // congestion experienced
)

// ECNEndpoint is an Endpoint that learns the codepoint each datagram arrived
// with, as a socket reading IP_TOS would. The Network calls ReceiveECN
// instead of Receive for it.
type ECNEndpoint interface {
	Endpoint
	ReceiveECN(now time.Duration, from netip.AddrPort, data []byte, ecn ECN)
}

// ecnTagShift places a datagram's codepoint in the two top bits of the tag
// that travels with it over a link; the bits below index its flow.
const (
	ecnTagShift = 62
	flowTagMask = 1<<ecnTagShift - 1
)

// arrivingECN is the codepoint a datagram sent with sent has past a link
// whose queue marked it (marked) and that may clear the field (bleach). A
// queue marks only ECN-capable packets CE (RFC 3168 section 5); a packet
// that is not keeps its codepoint, as under a threshold marker that never
// drops.
func arrivingECN(sent ECN, marked, bleach bool) ECN {
	switch {
	case bleach:
		return NotECT
	case marked && sent != NotECT:
		return CE
	}
	return sent
}
