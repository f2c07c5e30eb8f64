// Package ecn defines the ECN codepoint of a datagram's IP header (RFC
// 3168 section 5), the one type the simulator (netsim), the UDP sockets
// (quic/internal/udp) and the QUIC connection (quic/internal/core) use, so
// that a codepoint passes from one to the other without conversion. QUIC
// counts the codepoints it receives in ACK_ECN frames (RFC 9000 section
// 13.4).
package ecn

// Codepoint is the two-bit ECN field of a datagram's IP header: what an
// endpoint sends a datagram with, and what it arrives with. The constants
// have the values of the header bits.
type Codepoint uint8

// The ECN codepoints, by their value in the IP header.
const (
	NotECT Codepoint = 0b00 // not ECN-capable transport
	ECT1   Codepoint = 0b01 // ECN-capable transport, ECT(1) (L4S)
	ECT0   Codepoint = 0b10 // ECN-capable transport, ECT(0)
	CE     Codepoint = 0b11 // congestion experienced
)

// Mask keeps the two bits of the field.
const Mask = 0b11

// String names the codepoint as RFC 3168 writes it.
func (c Codepoint) String() string {
	switch c & Mask {
	case ECT1:
		return "ECT(1)"
	case ECT0:
		return "ECT(0)"
	case CE:
		return "CE"
	}
	return "Not-ECT"
}
