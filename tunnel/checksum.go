package tunnel

import (
	"encoding/binary"

	"github.com/satquic/satquic/internal/inetsum"
)

// Checksums are the Internet checksum of RFC 1071 (internal/inetsum).

// pseudoHeaderSum is the unfolded sum of the TCP/UDP pseudo-header: the
// addresses, the protocol and the upper-layer length (RFC 9293 section
// 3.1 for IPv4, RFC 8200 section 8.1 for IPv6).
func pseudoHeaderSum(src, dst []byte, proto uint8, length int) uint64 {
	acc := inetsum.Sum(0, src)
	acc = inetsum.Sum(acc, dst)
	return acc + uint64(proto) + uint64(length)
}

// ipv4HeaderChecksum sets the checksum of the IPv4 header h.
func ipv4HeaderChecksum(h []byte) {
	h[10], h[11] = 0, 0
	binary.BigEndian.PutUint16(h[10:], inetsum.Checksum(0, h))
}
