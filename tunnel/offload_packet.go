package tunnel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/satquic/satquic/internal/inetsum"
)

// IP protocol numbers the offloads handle.
const (
	protoTCP = 6
	protoUDP = 17
)

// TCP flags (RFC 9293 section 3.1, RFC 3168 section 6.1 for CWR and ECE).
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpPSH = 0x08
	tcpACK = 0x10
	tcpURG = 0x20
	tcpECE = 0x40
	tcpCWR = 0x80
)

const (
	ipv4MinHeader = 20
	ipv6Header    = 40
	tcpMinHeader  = 20
	udpHeader     = 8
)

// errNotOffloadable: a packet the offloads do not cut or join (not TCP or
// UDP over IPv4 or IPv6 without extension headers, or malformed).
var errNotOffloadable = errors.New("tunnel: not a TCP or UDP packet the offloads handle")

// l4Packet is the layout of a TCP or UDP packet over IP.
type l4Packet struct {
	v6    bool
	ipLen int   // the IP header's length: where the TCP or UDP header starts
	proto uint8 // protoTCP or protoUDP
	l4Len int   // the TCP header's length (options included), or 8 for UDP
}

// hdrsLen is the length of all headers: where the payload starts.
func (l l4Packet) hdrsLen() int { return l.ipLen + l.l4Len }

// addrs returns the source and destination addresses of p.
func (l l4Packet) addrs(p []byte) (src, dst []byte) {
	if l.v6 {
		return p[8:24], p[24:40]
	}
	return p[12:16], p[16:20]
}

// parseL4 reads the layout of a TCP or UDP packet: IPv4 (options
// allowed, not a fragment) or IPv6 whose first next header is TCP or
// UDP. Length fields are not checked against len(p): a GSO frame's may be
// anything, since the segments get their own.
func parseL4(p []byte) (l4Packet, error) {
	if len(p) == 0 {
		return l4Packet{}, errNotOffloadable
	}
	var l l4Packet
	switch p[0] >> 4 {
	case 4:
		if len(p) < ipv4MinHeader {
			return l, errNotOffloadable
		}
		l.ipLen = int(p[0]&0x0f) * 4
		if l.ipLen < ipv4MinHeader || l.ipLen > len(p) {
			return l, errNotOffloadable
		}
		if binary.BigEndian.Uint16(p[6:8])&0x3fff != 0 { // MF or an offset
			return l, errNotOffloadable
		}
		l.proto = p[9]
	case 6:
		if len(p) < ipv6Header {
			return l, errNotOffloadable
		}
		l.v6, l.ipLen, l.proto = true, ipv6Header, p[6]
	default:
		return l, errNotOffloadable
	}
	switch l.proto {
	case protoTCP:
		if len(p) < l.ipLen+tcpMinHeader {
			return l, errNotOffloadable
		}
		l.l4Len = int(p[l.ipLen+12]>>4) * 4
		if l.l4Len < tcpMinHeader || l.ipLen+l.l4Len > len(p) {
			return l, errNotOffloadable
		}
	case protoUDP:
		if len(p) < l.ipLen+udpHeader {
			return l, errNotOffloadable
		}
		l.l4Len = udpHeader
	default:
		return l, errNotOffloadable
	}
	return l, nil
}

// setLengths writes the length fields of p, n bytes long: the IP
// header's (and for IPv4 its identification and header checksum) and
// UDP's.
func (l l4Packet) setLengths(p []byte, n int, id uint16) {
	if l.proto == protoUDP {
		binary.BigEndian.PutUint16(p[l.ipLen+4:], uint16(n-l.ipLen))
	}
	if l.v6 {
		binary.BigEndian.PutUint16(p[4:], uint16(n-ipv6Header))
		return
	}
	binary.BigEndian.PutUint16(p[2:], uint16(n))
	binary.BigEndian.PutUint16(p[4:], id)
	ipv4HeaderChecksum(p[:l.ipLen])
}

// l4Checksum computes and stores the TCP or UDP checksum of p, the whole
// packet, over the pseudo-header and the upper-layer bytes.
func (l l4Packet) l4Checksum(p []byte) {
	src, dst := l.addrs(p)
	seg := p[l.ipLen:]
	field := l.checksumField()
	seg[field], seg[field+1] = 0, 0
	c := inetsum.Checksum(pseudoHeaderSum(src, dst, l.proto, len(seg)), seg)
	if c == 0 && l.proto == protoUDP {
		c = 0xffff // zero means "no checksum" in UDP (RFC 768)
	}
	binary.BigEndian.PutUint16(seg[field:], c)
}

// checksumField is where the checksum sits in the TCP or UDP header.
func (l l4Packet) checksumField() int {
	if l.proto == protoTCP {
		return 16
	}
	return 6
}

// l4ChecksumValid reports whether p's TCP or UDP checksum is right.
func (l l4Packet) l4ChecksumValid(p []byte) bool {
	src, dst := l.addrs(p)
	seg := p[l.ipLen:]
	return inetsum.Fold(inetsum.Sum(pseudoHeaderSum(src, dst, l.proto, len(seg)), seg)) == 0xffff
}

// completeChecksum finishes the checksum the kernel left to the device
// (VIRTIO_NET_HDR_F_NEEDS_CSUM): the ones' complement sum from csumStart
// to the end, whose field at csumStart+csumOffset already holds the
// pseudo-header's sum, is stored there complemented.
func completeChecksum(p []byte, h vnetHdr) error {
	start, at := int(h.csumStart), int(h.csumStart)+int(h.csumOffset)
	if start >= len(p) || at+2 > len(p) || at < start {
		return fmt.Errorf("tunnel: checksum to complete at %d+%d in a %d-byte packet", h.csumStart, h.csumOffset, len(p))
	}
	c := inetsum.Checksum(0, p[start:])
	if c == 0 {
		c = 0xffff // the same in ones' complement, and UDP's only choice
	}
	binary.BigEndian.PutUint16(p[at:], c)
	return nil
}
