package tunnel

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestSplitTSO: a TCP super-packet, IPv4 and IPv6, becomes segments of
// gso_size payload with their own lengths, IPv4 identification and
// header checksum, sequence numbers and TCP checksums (checked by an
// independent computation), FIN and PSH on the last only and CWR on the
// first only; the payloads put back together are the original's.
func TestSplitTSO(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		payload := pattern(5000)
		orig := tcpPacket{v6: v6, seq: 0xfffff000, flags: tcpACK | tcpPSH | tcpFIN | tcpCWR, id: 0xfffe,
			srcPort: 40000, options: []byte{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2}, payload: payload}.build()
		ipLen := 20
		gsoType := uint8(gsoTCPv4)
		if v6 {
			ipLen, gsoType = 40, gsoTCPv6
		}
		hdrs := ipLen + 32
		h := vnetHdr{flags: vnetFlagNeedsCsum, gsoType: gsoType, hdrLen: uint16(hdrs), gsoSize: 1400, csumStart: uint16(ipLen), csumOffset: 16}
		segs, err := splitAll(frame(h, partialTCP(orig, v6, ipLen)))
		if err != nil {
			t.Fatal(err)
		}
		wantLens := []int{1400, 1400, 1400, 800}
		if len(segs) != len(wantLens) {
			t.Fatalf("v6 %v: %d segments, want %d", v6, len(segs), len(wantLens))
		}
		var joined []byte
		for i, s := range segs {
			if got := len(s) - hdrs; got != wantLens[i] {
				t.Errorf("v6 %v segment %d: payload %d, want %d", v6, i, got, wantLens[i])
			}
			if v6 {
				if got := int(binary.BigEndian.Uint16(s[4:])); got != len(s)-40 {
					t.Errorf("segment %d: payload length %d of %d bytes", i, got, len(s))
				}
			} else {
				if got := int(binary.BigEndian.Uint16(s[2:])); got != len(s) {
					t.Errorf("segment %d: total length %d of %d bytes", i, got, len(s))
				}
				if got, want := binary.BigEndian.Uint16(s[4:]), uint16(0xfffe+i); got != want {
					t.Errorf("segment %d: IP ID %#x, want %#x", i, got, want)
				}
				if !refIPv4Valid(s) {
					t.Errorf("segment %d: IPv4 header checksum wrong", i)
				}
			}
			if !refL4Valid(s, v6, ipLen, protoTCP) {
				t.Errorf("v6 %v segment %d: TCP checksum wrong", v6, i)
			}
			if got, want := binary.BigEndian.Uint32(s[ipLen+4:]), uint32(0xfffff000)+uint32(1400*i); got != want {
				t.Errorf("segment %d: seq %#x, want %#x", i, got, want)
			}
			flags := s[ipLen+13]
			want := uint8(tcpACK)
			if i == 0 {
				want |= tcpCWR
			}
			if i == len(segs)-1 {
				want |= tcpPSH | tcpFIN
			}
			if flags != want {
				t.Errorf("segment %d: flags %#x, want %#x", i, flags, want)
			}
			if !bytes.Equal(s[ipLen:ipLen+4], orig[ipLen:ipLen+4]) || !bytes.Equal(s[ipLen+8:ipLen+13], orig[ipLen+8:ipLen+13]) {
				t.Errorf("segment %d: ports, acknowledgement or data offset changed", i)
			}
			if !bytes.Equal(s[ipLen+20:hdrs], orig[ipLen+20:hdrs]) {
				t.Errorf("segment %d: options changed", i)
			}
			joined = append(joined, s[hdrs:]...)
		}
		if !bytes.Equal(joined, payload) {
			t.Errorf("v6 %v: payloads differ from the original's", v6)
		}
	}
}

// TestSplitUSO: a UDP super-packet becomes datagrams of gso_size payload
// with their lengths and checksums, and IPv4 identifications counting up.
func TestSplitUSO(t *testing.T) {
	payload := pattern(3000)
	orig := udpDatagram(9, payload)
	h := vnetHdr{flags: vnetFlagNeedsCsum, gsoType: gsoUDPL4, hdrLen: 28, gsoSize: 1200, csumStart: 20, csumOffset: 6}
	segs, err := splitAll(frame(h, orig))
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 3 {
		t.Fatalf("%d datagrams, want 3", len(segs))
	}
	for i, s := range segs {
		want := udpDatagram(uint16(9+i), payload[1200*i:min(1200*(i+1), len(payload))])
		if !bytes.Equal(s, want) {
			t.Errorf("datagram %d:\n got %x\nwant %x", i, s[:28], want[:28])
		}
		if !refIPv4Valid(s) || !refL4Valid(s, false, 20, protoUDP) {
			t.Errorf("datagram %d: checksum wrong", i)
		}
	}
}

// TestCompleteChecksum: a packet whose checksum the kernel left to the
// device (no GSO) comes out with it completed.
func TestCompleteChecksum(t *testing.T) {
	want := tcpPacket{seq: 5, flags: tcpACK, srcPort: 1, payload: pattern(333)}.build()
	h := vnetHdr{flags: vnetFlagNeedsCsum, csumStart: 20, csumOffset: 16}
	segs, err := splitAll(frame(h, partialTCP(want, false, 20)))
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) != 1 || !bytes.Equal(segs[0], want) {
		t.Fatalf("got %d packets, want the packet with its checksum", len(segs))
	}
	// Without the flag the packet is left as it is.
	segs, err = splitAll(frame(vnetHdr{}, want))
	if err != nil || len(segs) != 1 || !bytes.Equal(segs[0], want) {
		t.Fatalf("plain packet: %v, %d packets", err, len(segs))
	}
}

// TestSplitShortBuffer: a buffer too small for a segment is an error, and
// the frame is given up, not read past.
func TestSplitShortBuffer(t *testing.T) {
	p := tcpPacket{flags: tcpACK, payload: pattern(3000)}.build()
	h := vnetHdr{flags: vnetFlagNeedsCsum, gsoType: gsoTCPv4, hdrLen: 40, gsoSize: 1400, csumStart: 20, csumOffset: 16}
	var s segmenter
	if err := s.reset(frame(h, p)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.next(make([]byte, 100)); err == nil || ok {
		t.Fatalf("a 100-byte buffer took a 1440-byte segment: %v %v", ok, err)
	}
	if _, ok, _ := s.next(make([]byte, 2000)); ok {
		t.Fatal("the frame went on after an error")
	}
}

// TestSplitRefusesBadFrames: frames that name a GSO type their packet does
// not have, or segments of size 0, or checksum places outside the packet,
// are errors.
func TestSplitRefusesBadFrames(t *testing.T) {
	tcp := tcpPacket{flags: tcpACK, payload: pattern(3000)}.build()
	for name, f := range map[string][]byte{
		"TCPv6 on IPv4":   frame(vnetHdr{gsoType: gsoTCPv6, gsoSize: 1000}, tcp),
		"USO on TCP":      frame(vnetHdr{gsoType: gsoUDPL4, gsoSize: 1000}, tcp),
		"segment size 0":  frame(vnetHdr{gsoType: gsoTCPv4}, tcp),
		"unknown type":    frame(vnetHdr{gsoType: 3, gsoSize: 1000}, tcp),
		"checksum beyond": frame(vnetHdr{flags: vnetFlagNeedsCsum, csumStart: 20, csumOffset: 5000}, tcp),
		"no packet":       frame(vnetHdr{}, nil),
		"short header":    make([]byte, vnetHdrLen-1),
	} {
		if _, err := splitAll(f); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSplitTruncated: every prefix of a valid GSO frame gives packets or
// an error, never a panic.
func TestSplitTruncated(t *testing.T) {
	p := tcpPacket{v6: true, flags: tcpACK, options: []byte{1, 1, 1, 1}, payload: pattern(4000)}.build()
	f := frame(vnetHdr{flags: vnetFlagNeedsCsum, gsoType: gsoTCPv6, gsoSize: 1000, csumStart: 40, csumOffset: 16}, p)
	for n := range len(f) {
		segs, err := splitAll(f[:n])
		if err == nil && n < vnetHdrLen+60 {
			t.Errorf("prefix %d: split without error into %d packets", n, len(segs))
		}
		for _, s := range segs {
			if len(s) > 2048 {
				t.Fatalf("prefix %d: %d-byte segment", n, len(s))
			}
		}
	}
}

// FuzzSegmenter: any frame gives packets no longer than the buffer or an
// error; the segments of a TCP GSO frame carry right checksums.
func FuzzSegmenter(f *testing.F) {
	tcp := tcpPacket{flags: tcpACK | tcpPSH, payload: pattern(3000)}.build()
	f.Add(frame(vnetHdr{flags: vnetFlagNeedsCsum, gsoType: gsoTCPv4, gsoSize: 1400, csumStart: 20, csumOffset: 16}, tcp))
	f.Add(frame(vnetHdr{gsoType: gsoUDPL4, gsoSize: 1000}, udpDatagram(1, pattern(2500))))
	f.Add(frame(vnetHdr{flags: vnetFlagNeedsCsum, csumStart: 20, csumOffset: 16}, tcp[:500]))
	f.Add(frame(vnetHdr{gsoType: gsoTCPv6, gsoSize: 7}, tcpPacket{v6: true, payload: pattern(100)}.build()))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		h, herr := parseVnetHdr(b)
		segs, err := splitAll(b)
		if err != nil {
			return
		}
		if herr != nil {
			t.Fatal("a frame without a header was split")
		}
		if h.gsoType&^gsoECNBit == gsoNone {
			return
		}
		for i, s := range segs {
			l, err := parseL4(s)
			if err != nil {
				t.Fatalf("segment %d does not parse: %v", i, err)
			}
			if !refL4Valid(s, l.v6, l.ipLen, l.proto) {
				t.Fatalf("segment %d: checksum wrong", i)
			}
		}
	})
}
