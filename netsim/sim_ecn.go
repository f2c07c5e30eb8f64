package netsim

import (
	"net/netip"
	"time"
)

// ECN is the two-bit ECN field of a datagram's IP header (RFC 3168 section
// 5): what an endpoint sends a datagram with, and what it arrives with.
type ECN uint8

// The ECN codepoints, by their value in the IP header.
const (
	NotECT ECN = 0b00 // not ECN-capable transport
	ECT1   ECN = 0b01 // ECN-capable transport, ECT(1)
	ECT0   ECN = 0b10 // ECN-capable transport, ECT(0)
	CE     ECN = 0b11 // congestion experienced
)

// String names the codepoint as RFC 3168 writes it.
func (e ECN) String() string {
	switch e & 0b11 {
	case ECT1:
		return "ECT(1)"
	case ECT0:
		return "ECT(0)"
	case CE:
		return "CE"
	}
	return "Not-ECT"
}

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
