package tunnel

import (
	"bytes"
	"encoding/binary"
	"github.com/satquic/satquic/internal/inetsum"
)

// Receive-side coalescing (what GRO does in a NIC driver): the TCP
// segments of one flow that follow each other in a batch of packets for
// the device are joined into one GSO packet and written with one call,
// so that the kernel runs its TCP receive path once for all of them.
// Anything else is written as it is.

const (
	// maxGROSegments bounds the segments joined into one packet, as
	// Linux's own GRO does.
	maxGROSegments = 64
	// maxGROPacket is the largest packet written: the IP length fields'
	// limit.
	maxGROPacket = 65535
)

// groSegment is what coalescing needs of one packet of a batch.
type groSegment struct {
	l          l4Packet
	seq        uint32
	flags      uint8
	payloadLen int
	ok         bool // a TCP segment that may join others
}

// classifyGRO reads p as a TCP segment that coalescing may join: data, a
// right checksum (a segment the kernel would drop must not hide in a
// packet it trusts), and only ACK and PSH among its flags.
func classifyGRO(p []byte) groSegment {
	l, err := parseL4(p)
	if err != nil || l.proto != protoTCP {
		return groSegment{}
	}
	if !ipLengthMatches(l, p) {
		return groSegment{}
	}
	tcp := p[l.ipLen:]
	s := groSegment{l: l, seq: binary.BigEndian.Uint32(tcp[4:]), flags: tcp[13], payloadLen: len(p) - l.hdrsLen()}
	if s.payloadLen == 0 || s.flags&^tcpPSH != tcpACK || !l.l4ChecksumValid(p) {
		return groSegment{}
	}
	s.ok = true
	return s
}

// ipLengthMatches reports whether the IP length field of p says len(p).
func ipLengthMatches(l l4Packet, p []byte) bool {
	if l.v6 {
		return int(binary.BigEndian.Uint16(p[4:]))+ipv6Header == len(p)
	}
	return int(binary.BigEndian.Uint16(p[2:])) == len(p)
}

// sameFlowHeaders reports whether q's headers are p's but for what
// changes from one segment of a flow to the next: the IP length,
// identification and checksum, the sequence number, PSH and the TCP
// checksum. Options must be equal byte for byte, as Linux's GRO asks.
func sameFlowHeaders(p, q []byte, l l4Packet) bool {
	if l.v6 {
		// Version, traffic class, flow label; next header, hop limit,
		// addresses.
		if !bytes.Equal(p[0:4], q[0:4]) || !bytes.Equal(p[6:40], q[6:40]) {
			return false
		}
	} else if p[0] != q[0] || p[1] != q[1] || p[6] != q[6] || p[7] != q[7] || p[8] != q[8] || p[9] != q[9] ||
		!bytes.Equal(p[12:l.ipLen], q[12:l.ipLen]) {
		// Header length, TOS, flags, TTL, protocol, addresses, options.
		return false
	}
	pt, qt := p[l.ipLen:l.hdrsLen()], q[l.ipLen:l.hdrsLen()]
	// Ports, acknowledgement number, data offset, window, urgent
	// pointer, options.
	return bytes.Equal(pt[0:4], qt[0:4]) && bytes.Equal(pt[8:13], qt[8:13]) &&
		bytes.Equal(pt[14:16], qt[14:16]) && bytes.Equal(pt[18:], qt[18:])
}

// groGroup is packets of a batch written together: one, or a run of TCP
// segments of one flow.
type groGroup struct {
	members []int // indices into the batch, in order
	bytes   int   // the joined packet's length
	gsoSize int   // payload bytes of each segment but the last
	open    bool  // another segment may join
}

// planGRO groups a batch's packets, reusing groups' storage. A segment
// joins the last group of its flow when it continues it: the next
// sequence number, the same headers, no more payload than the group's
// segments, and room left. Groups are written in the order they were
// opened, which keeps each flow's packets in order.
func planGRO(pkts [][]byte, segs []groSegment, groups []groGroup) []groGroup {
	groups = groups[:0]
	for i, p := range pkts {
		segs[i] = classifyGRO(p)
		if segs[i].ok {
			if g := lastGroupOf(pkts, segs, groups, i); g != nil && joins(pkts, segs, g, i) {
				s := segs[i]
				g.members = append(g.members, i)
				g.bytes += s.payloadLen
				g.open = s.payloadLen == g.gsoSize && len(g.members) < maxGROSegments && s.flags&tcpPSH == 0
				continue
			}
		}
		groups = append(groups, groGroup{})
		g := &groups[len(groups)-1]
		if cap(g.members) == 0 {
			g.members = make([]int, 0, 8)
		}
		g.members = append(g.members[:0], i)
		g.bytes, g.gsoSize = len(p), segs[i].payloadLen
		g.open = segs[i].ok && segs[i].flags&tcpPSH == 0
	}
	return groups
}

// lastGroupOf returns the last group whose flow is segment i's, or nil.
func lastGroupOf(pkts [][]byte, segs []groSegment, groups []groGroup, i int) *groGroup {
	for k := len(groups) - 1; k >= 0; k-- {
		first := groups[k].members[0]
		if segs[first].ok && segs[first].l == segs[i].l && sameFlow(pkts[first], pkts[i], segs[i].l) {
			return &groups[k]
		}
	}
	return nil
}

// sameFlow compares addresses and ports.
func sameFlow(p, q []byte, l l4Packet) bool {
	ps, pd := l.addrs(p)
	qs, qd := l.addrs(q)
	return bytes.Equal(ps, qs) && bytes.Equal(pd, qd) && bytes.Equal(p[l.ipLen:l.ipLen+4], q[l.ipLen:l.ipLen+4])
}

// joins reports whether segment i continues group g.
func joins(pkts [][]byte, segs []groSegment, g *groGroup, i int) bool {
	last := g.members[len(g.members)-1]
	s, prev := segs[i], segs[last]
	return g.open && s.payloadLen <= g.gsoSize && g.bytes+s.payloadLen <= maxGROPacket &&
		s.seq == prev.seq+uint32(prev.payloadLen) && sameFlowHeaders(pkts[last], pkts[i], s.l)
}

// appendGRO appends group g as one frame for the device: a virtio-net
// header asking the kernel to treat it as a GSO packet of g.gsoSize
// segments with the TCP checksum left to complete (which the kernel's
// receive path takes as verified: each segment's was checked in
// classifyGRO), and the first segment's headers with the joined lengths,
// then every segment's payload. A group of one packet is that packet
// behind an empty header.
func appendGRO(dst []byte, pkts [][]byte, segs []groSegment, g *groGroup) []byte {
	first := pkts[g.members[0]]
	if len(g.members) == 1 {
		var h [vnetHdrLen]byte
		return append(append(dst, h[:]...), first...)
	}
	s := segs[g.members[0]]
	l := s.l
	gsoType := uint8(gsoTCPv4)
	if l.v6 {
		gsoType = gsoTCPv6
	}
	start := len(dst)
	dst = append(dst, make([]byte, vnetHdrLen)...)
	vnetHdr{
		flags: vnetFlagNeedsCsum, gsoType: gsoType, hdrLen: uint16(l.hdrsLen()), gsoSize: uint16(g.gsoSize),
		csumStart: uint16(l.ipLen), csumOffset: 16,
	}.put(dst[start:])
	pkt := len(dst)
	dst = append(dst, first[:l.hdrsLen()]...)
	var flags uint8
	for _, m := range g.members {
		dst = append(dst, pkts[m][l.hdrsLen():]...)
		flags |= segs[m].flags
	}
	p := dst[pkt:]
	l.setLengths(p, len(p), binary.BigEndian.Uint16(first[4:]))
	tcp := p[l.ipLen:]
	tcp[13] = flags // ACK, and PSH if a segment had it: the last
	// NEEDS_CSUM: the field holds the pseudo-header's sum, which the
	// checksum over the TCP bytes completes.
	src, dstAddr := l.addrs(p)
	binary.BigEndian.PutUint16(tcp[16:], inetsum.Fold(pseudoHeaderSum(src, dstAddr, protoTCP, len(tcp))))
	return dst
}
