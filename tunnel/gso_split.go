package tunnel

import (
	"encoding/binary"
	"fmt"
	"io"
)

// segmenter cuts a frame read from a TUN device with offloads on (a
// virtio-net header and an IP packet) into IP packets the tunnel carries:
// what a NIC does for TSO and USO. A TCP super-packet of up to 64 kB
// becomes segments of gso_size payload bytes, each with its own IP
// lengths, IPv4 identification (the first's plus the segment's index, as
// Linux's own segmentation numbers them) and header checksum, TCP
// sequence number and checksum; FIN and PSH stay on the last segment
// only and CWR on the first (RFC 3168 section 6.1.2: CWR marks the first
// segment sent after the window was reduced). A UDP one becomes datagrams
// of gso_size payload bytes with their own lengths and checksums. A frame
// without GSO is one packet, its checksum completed if the kernel left
// it to the device.
type segmenter struct {
	h    vnetHdr
	pkt  []byte
	l    l4Packet
	off  int  // payload bytes already cut
	gso  bool // the frame is cut into segments
	done bool
}

// reset takes a new frame; it fails on a frame it cannot make whole
// packets of, which is then dropped.
func (s *segmenter) reset(frame []byte) error {
	*s = segmenter{done: true}
	h, err := parseVnetHdr(frame)
	if err != nil {
		return err
	}
	pkt := frame[vnetHdrLen:]
	if len(pkt) == 0 {
		return fmt.Errorf("tunnel: empty packet after the virtio-net header")
	}
	s.h, s.pkt = h, pkt
	switch h.gsoType &^ gsoECNBit {
	case gsoNone:
		if h.flags&vnetFlagNeedsCsum != 0 {
			if err := completeChecksum(pkt, h); err != nil {
				return err
			}
		}
		s.done = false
		return nil
	case gsoTCPv4, gsoTCPv6, gsoUDPL4:
	default:
		return fmt.Errorf("tunnel: GSO type %d", h.gsoType)
	}
	if s.l, err = parseL4(pkt); err != nil {
		return fmt.Errorf("tunnel: GSO frame: %w", err)
	}
	if !gsoMatches(h.gsoType, s.l) {
		return fmt.Errorf("tunnel: GSO type %d on an IPv%d packet of protocol %d", h.gsoType, ipVersion(s.l), s.l.proto)
	}
	if h.gsoSize == 0 {
		return fmt.Errorf("tunnel: GSO frame with a segment size of 0")
	}
	s.gso, s.done = true, false
	if len(pkt)-s.l.hdrsLen() <= int(h.gsoSize) {
		// One segment's worth: sent as it is, lengths and checksum set.
		s.gso = false
		s.l.setLengths(pkt, len(pkt), s.ipv4ID())
		s.l.l4Checksum(pkt)
	}
	return nil
}

// gsoMatches reports whether a GSO type fits the packet it came with.
func gsoMatches(gsoType uint8, l l4Packet) bool {
	switch gsoType &^ gsoECNBit {
	case gsoTCPv4:
		return l.proto == protoTCP && !l.v6
	case gsoTCPv6:
		return l.proto == protoTCP && l.v6
	case gsoUDPL4:
		return l.proto == protoUDP
	}
	return false
}

func ipVersion(l l4Packet) int {
	if l.v6 {
		return 6
	}
	return 4
}

func (s *segmenter) ipv4ID() uint16 {
	if s.l.v6 {
		return 0
	}
	return binary.BigEndian.Uint16(s.pkt[4:])
}

// next writes the frame's next packet into dst and returns its length;
// false when the frame is used up. A dst too small for the packet is
// io.ErrShortBuffer, and the rest of the frame is dropped.
func (s *segmenter) next(dst []byte) (int, bool, error) {
	if s.done {
		return 0, false, nil
	}
	if !s.gso {
		s.done = true
		if len(dst) < len(s.pkt) {
			return 0, false, io.ErrShortBuffer
		}
		return copy(dst, s.pkt), true, nil
	}
	hdrs := s.l.hdrsLen()
	payload := s.pkt[hdrs:]
	size := int(s.h.gsoSize)
	chunk := min(size, len(payload)-s.off)
	n := hdrs + chunk
	if len(dst) < n {
		s.done = true
		return 0, false, io.ErrShortBuffer
	}
	index := s.off / size
	copy(dst, s.pkt[:hdrs])
	copy(dst[hdrs:], payload[s.off:s.off+chunk])
	last := s.off+chunk == len(payload)
	s.l.setLengths(dst, n, s.ipv4ID()+uint16(index))
	if l4 := dst[s.l.ipLen:]; s.l.proto == protoTCP {
		seq := binary.BigEndian.Uint32(l4[4:])
		binary.BigEndian.PutUint32(l4[4:], seq+uint32(s.off))
		if !last {
			l4[13] &^= tcpFIN | tcpPSH
		}
		if index > 0 {
			l4[13] &^= tcpCWR
		}
	}
	s.l.l4Checksum(dst[:n])
	s.off += chunk
	s.done = last
	return n, true, nil
}
