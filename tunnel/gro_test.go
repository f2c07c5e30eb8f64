package tunnel

import (
	"bytes"
	"encoding/binary"
	"slices"
	"testing"
)

// run builds n consecutive segments of one flow, size bytes of payload
// each (the last lastSize), the last with PSH.
func run(v6 bool, port uint16, seq uint32, n, size, lastSize int) [][]byte {
	var out [][]byte
	for i := range n {
		sz, flags := size, uint8(tcpACK)
		if i == n-1 {
			sz, flags = lastSize, tcpACK|tcpPSH
		}
		out = append(out, tcpPacket{v6: v6, seq: seq, flags: flags, id: uint16(100 + i), srcPort: port,
			options: []byte{1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8}, payload: pattern(sz)}.build())
		seq += uint32(sz)
	}
	return out
}

func groups(t *testing.T, pkts [][]byte) []groGroup {
	t.Helper()
	return planGRO(pkts, make([]groSegment, len(pkts)), nil)
}

// TestGROJoinsARun: consecutive segments of a flow, IPv4 and IPv6, become
// one GSO frame: the virtio-net header says TCP GSO of the first
// segment's payload size with the checksum to complete at the TCP
// header; the packet is the first segment's headers with the total
// length, the last's PSH and the pseudo-header's sum in the checksum
// field (checked independently), then every payload. Cut again as the
// kernel would, it gives back the original segments byte for byte.
func TestGROJoinsARun(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		pkts := run(v6, 1000, 0xfffffa00, 5, 1388, 700)
		segs := make([]groSegment, len(pkts))
		gs := planGRO(pkts, segs, nil)
		if len(gs) != 1 || len(gs[0].members) != 5 {
			t.Fatalf("v6 %v: groups %+v, want one of 5", v6, gs)
		}
		f := appendGRO(nil, pkts, segs, &gs[0])
		h, err := parseVnetHdr(f)
		if err != nil {
			t.Fatal(err)
		}
		ipLen, gsoType := 20, uint8(gsoTCPv4)
		if v6 {
			ipLen, gsoType = 40, gsoTCPv6
		}
		want := vnetHdr{flags: vnetFlagNeedsCsum, gsoType: gsoType, hdrLen: uint16(ipLen + 32), gsoSize: 1388,
			csumStart: uint16(ipLen), csumOffset: 16}
		if h != want {
			t.Fatalf("header %+v, want %+v", h, want)
		}
		p := f[vnetHdrLen:]
		if wantLen := ipLen + 32 + 4*1388 + 700; len(p) != wantLen {
			t.Fatalf("joined packet of %d bytes, want %d", len(p), wantLen)
		}
		if !v6 && (int(binary.BigEndian.Uint16(p[2:])) != len(p) || !refIPv4Valid(p)) {
			t.Errorf("IPv4 length or header checksum wrong")
		}
		if v6 && int(binary.BigEndian.Uint16(p[4:])) != len(p)-40 {
			t.Errorf("IPv6 payload length wrong")
		}
		if p[ipLen+13] != tcpACK|tcpPSH {
			t.Errorf("flags %#x", p[ipLen+13])
		}
		ph := refPseudo(p, v6, protoTCP, len(p)-ipLen)
		if got, want := binary.BigEndian.Uint16(p[ipLen+16:]), ^refChecksum(ph); got != want {
			t.Errorf("checksum field %#x, want the pseudo-header's sum %#x", got, want)
		}
		back, err := splitAll(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(back) != len(pkts) {
			t.Fatalf("cut back into %d packets, want %d", len(back), len(pkts))
		}
		for i := range back {
			if !bytes.Equal(back[i], pkts[i]) {
				t.Errorf("v6 %v: segment %d differs after joining and cutting", v6, i)
			}
		}
	}
}

// TestGROGroups: what joins and what does not.
func TestGROGroups(t *testing.T) {
	a := run(false, 1, 1000, 3, 1000, 1000)
	b := run(false, 2, 5000, 3, 1000, 1000)
	interleaved := [][]byte{a[0], b[0], a[1], b[1], a[2], b[2]}
	bad := append([]byte(nil), a[1]...)
	bad[len(bad)-1] ^= 0xff
	syn := tcpPacket{seq: 2000, flags: tcpACK | tcpSYN, srcPort: 1, options: []byte{1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8}, payload: pattern(1000)}.build()
	small := run(false, 1, 1000, 3, 1000, 1000)
	small[1] = tcpPacket{seq: 2000, flags: tcpACK, id: 101, srcPort: 1, options: []byte{1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8}, payload: pattern(500)}.build()
	small[2] = tcpPacket{seq: 2500, flags: tcpACK, id: 102, srcPort: 1, options: []byte{1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 8}, payload: pattern(500)}.build()
	otherTS := run(false, 1, 1000, 2, 1000, 1000)
	otherTS[1][20+20+11] ^= 1 // the timestamp option differs
	for _, tc := range []struct {
		name string
		pkts [][]byte
		want []int // members per group
	}{
		{"a run", a, []int{3}},
		{"two flows interleaved", interleaved, []int{3, 3}},
		{"out of order", [][]byte{a[0], a[2], a[1]}, []int{1, 1, 1}},
		{"a duplicate", [][]byte{a[0], a[0], a[1]}, []int{1, 2}},
		{"a bad checksum", [][]byte{a[0], bad, a[2]}, []int{1, 1, 1}},
		{"a SYN", [][]byte{a[0], syn}, []int{1, 1}},
		{"a smaller segment ends the run", small, []int{2, 1}},
		{"different options", otherTS, []int{1, 1}},
		{"PSH ends the run", [][]byte{a[2], a[0], a[1]}, []int{1, 2}},
		{"not TCP", [][]byte{udpDatagram(1, pattern(100)), udpDatagram(2, pattern(100))}, []int{1, 1}},
		{"an ACK without data", [][]byte{tcpPacket{flags: tcpACK}.build(), tcpPacket{flags: tcpACK}.build()}, []int{1, 1}},
	} {
		gs := groups(t, tc.pkts)
		var got []int
		total := 0
		for _, g := range gs {
			got = append(got, len(g.members))
			total += len(g.members)
		}
		if total != len(tc.pkts) || !slices.Equal(got, tc.want) {
			t.Errorf("%s: groups of %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestGROSizeLimit: a run stops before the joined packet would pass
// 65535 bytes or 64 segments.
func TestGROSizeLimit(t *testing.T) {
	big := run(false, 1, 0, 60, 1400, 1400)
	for _, g := range groups(t, big) {
		if g.bytes > maxGROPacket {
			t.Errorf("a group of %d bytes", g.bytes)
		}
	}
	if gs := groups(t, big); len(gs) != 2 || len(gs[0].members) != (maxGROPacket-20-32)/1400 {
		t.Errorf("groups %d, first of %d", len(gs), len(gs[0].members))
	}
	tiny := run(true, 1, 0, 100, 10, 10)
	if gs := groups(t, tiny); len(gs[0].members) != maxGROSegments {
		t.Errorf("first group of %d segments, want %d", len(gs[0].members), maxGROSegments)
	}
}

// withoutIPv4ID is p with an IPv4 header's identification and checksum
// zeroed: cutting numbers segments from the first one's identification,
// which the segments joined need not have done.
func withoutIPv4ID(p []byte) []byte {
	q := append([]byte(nil), p...)
	if q[0]>>4 == 4 {
		q[4], q[5], q[10], q[11] = 0, 0, 0, 0
	}
	return q
}

// TestGROTruncated: every prefix of a segment, among whole ones, is
// planned and written without a panic, alone.
func TestGROTruncated(t *testing.T) {
	a := run(true, 1, 0, 2, 600, 600)
	for n := range len(a[1]) {
		pkts := [][]byte{a[0], a[1][:n]}
		segs := make([]groSegment, 2)
		gs := planGRO(pkts, segs, nil)
		if len(gs) != 2 {
			t.Fatalf("prefix %d joined a whole segment", n)
		}
		for i := range gs {
			_ = appendGRO(nil, pkts, segs, &gs[i])
		}
	}
}

// FuzzGRO: any batch (the input cut at its 0xff 0xfe pairs) is planned
// into groups that hold every packet once, in order within a flow; a
// joined group cut again gives back its packets.
func FuzzGRO(f *testing.F) {
	a := run(false, 1, 0, 3, 500, 200)
	f.Add(bytes.Join(a, []byte{0xff, 0xfe}))
	b := run(true, 9, 77, 4, 300, 300)
	f.Add(bytes.Join([][]byte{b[0], a[0], b[1], a[1], b[2]}, []byte{0xff, 0xfe}))
	f.Fuzz(func(t *testing.T, in []byte) {
		pkts := bytes.Split(in, []byte{0xff, 0xfe})
		segs := make([]groSegment, len(pkts))
		gs := planGRO(pkts, segs, nil)
		seen := 0
		for i := range gs {
			g := &gs[i]
			seen += len(g.members)
			fr := appendGRO(nil, pkts, segs, g)
			if len(g.members) == 1 {
				continue
			}
			back, err := splitAll(fr)
			if err != nil {
				t.Fatalf("a joined group does not cut: %v", err)
			}
			if len(back) != len(g.members) {
				t.Fatalf("%d packets joined, %d cut", len(g.members), len(back))
			}
			for k, m := range g.members {
				if !bytes.Equal(withoutIPv4ID(back[k]), withoutIPv4ID(pkts[m])) {
					t.Fatalf("packet %d of a group differs after joining and cutting", k)
				}
			}
		}
		if seen != len(pkts) {
			t.Fatalf("%d packets planned of %d", seen, len(pkts))
		}
	})
}
