package tunnel

import (
	"encoding/binary"
)

// refChecksum is the Internet checksum computed the plain way, a 16-bit
// word at a time with the carry folded at each step (RFC 1071 section
// 4.1), to check the package's own against.
func refChecksum(chunks ...[]byte) uint16 {
	var b []byte
	for _, c := range chunks {
		b = append(b, c...)
	}
	var sum uint32
	for i := 0; i < len(b); i += 2 {
		w := uint32(b[i]) << 8
		if i+1 < len(b) {
			w |= uint32(b[i+1])
		}
		sum += w
		sum = (sum & 0xffff) + (sum >> 16)
	}
	return ^uint16(sum)
}

// refPseudo is the pseudo-header as bytes (RFC 9293 section 3.1, RFC 8200
// section 8.1).
func refPseudo(p []byte, v6 bool, proto uint8, l4len int) []byte {
	var ph []byte
	if v6 {
		ph = append(ph, p[8:40]...)
		ph = binary.BigEndian.AppendUint32(ph, uint32(l4len))
		return append(ph, 0, 0, 0, proto)
	}
	ph = append(ph, p[12:20]...)
	ph = append(ph, 0, proto)
	return binary.BigEndian.AppendUint16(ph, uint16(l4len))
}

// refL4Valid checks a TCP or UDP checksum with refChecksum.
func refL4Valid(p []byte, v6 bool, ipLen int, proto uint8) bool {
	return refChecksum(refPseudo(p, v6, proto, len(p)-ipLen), p[ipLen:]) == 0
}

// refIPv4Valid checks an IPv4 header checksum with refChecksum.
func refIPv4Valid(p []byte) bool {
	return refChecksum(p[:int(p[0]&0x0f)*4]) == 0
}

// tcpPacket builds a TCP segment with right lengths and checksums.
type tcpPacket struct {
	v6      bool
	seq     uint32
	flags   uint8
	id      uint16
	srcPort uint16
	options []byte // a multiple of 4 bytes
	payload []byte
}

func (t tcpPacket) build() []byte {
	var p []byte
	thl := 20 + len(t.options)
	if t.v6 {
		p = make([]byte, 40)
		p[0] = 0x60
		binary.BigEndian.PutUint16(p[4:], uint16(thl+len(t.payload)))
		p[6], p[7] = protoTCP, 64
		p[8], p[23] = 0xfd, 1
		p[24], p[39] = 0xfd, 2
	} else {
		p = make([]byte, 20)
		p[0] = 0x45
		binary.BigEndian.PutUint16(p[2:], uint16(20+thl+len(t.payload)))
		binary.BigEndian.PutUint16(p[4:], t.id)
		p[6] = 0x40 // DF
		p[8], p[9] = 64, protoTCP
		copy(p[12:], []byte{10, 99, 0, 2, 10, 99, 0, 1})
		binary.BigEndian.PutUint16(p[10:], refChecksum(p))
	}
	ipLen := len(p)
	tcp := make([]byte, thl)
	binary.BigEndian.PutUint16(tcp[0:], t.srcPort)
	binary.BigEndian.PutUint16(tcp[2:], 5201)
	binary.BigEndian.PutUint32(tcp[4:], t.seq)
	binary.BigEndian.PutUint32(tcp[8:], 777)
	tcp[12] = byte(thl/4) << 4
	tcp[13] = t.flags
	binary.BigEndian.PutUint16(tcp[14:], 512)
	copy(tcp[20:], t.options)
	p = append(append(p, tcp...), t.payload...)
	binary.BigEndian.PutUint16(p[ipLen+16:], refChecksum(refPseudo(p, t.v6, protoTCP, len(p)-ipLen), p[ipLen:]))
	return p
}

// udpDatagram builds a UDP datagram over IPv4 with right checksums.
func udpDatagram(id uint16, payload []byte) []byte {
	p := make([]byte, 28, 28+len(payload))
	p[0] = 0x45
	binary.BigEndian.PutUint16(p[2:], uint16(28+len(payload)))
	binary.BigEndian.PutUint16(p[4:], id)
	p[8], p[9] = 64, protoUDP
	copy(p[12:], []byte{10, 99, 0, 2, 10, 99, 0, 1})
	binary.BigEndian.PutUint16(p[10:], refChecksum(p[:20]))
	binary.BigEndian.PutUint16(p[20:], 4000)
	binary.BigEndian.PutUint16(p[22:], 53)
	binary.BigEndian.PutUint16(p[24:], uint16(8+len(payload)))
	p = append(p, payload...)
	c := refChecksum(refPseudo(p, false, protoUDP, len(p)-20), p[20:])
	if c == 0 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(p[26:], c)
	return p
}

// pattern is n bytes that differ from one offset to the next.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// frame puts a virtio-net header in front of p.
func frame(h vnetHdr, p []byte) []byte {
	f := make([]byte, vnetHdrLen, vnetHdrLen+len(p))
	h.put(f)
	return append(f, p...)
}

// partialTCP turns p's TCP checksum into what the kernel hands a device
// that offloads it: the pseudo-header's sum, not complemented.
func partialTCP(p []byte, v6 bool, ipLen int) []byte {
	q := append([]byte(nil), p...)
	ph := refPseudo(q, v6, protoTCP, len(q)-ipLen)
	binary.BigEndian.PutUint16(q[ipLen+16:], ^refChecksum(ph))
	return q
}

// splitAll runs a frame through a segmenter into 2 kB buffers.
func splitAll(f []byte) ([][]byte, error) {
	var s segmenter
	if err := s.reset(f); err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		buf := make([]byte, 2048)
		n, ok, err := s.next(buf)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, buf[:n])
	}
}
