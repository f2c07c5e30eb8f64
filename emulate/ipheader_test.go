//go:build linux

package emulate

import (
	"github.com/satquic/satquic/internal/inetsum"
	"net/netip"
	"testing"
)

func TestFakeHeadersCarryValidChecksums(t *testing.T) {
	payload := []byte("some datagram payload of odd length")
	for _, c := range []struct {
		src, dst string
		hdr      int
	}{
		{"10.0.0.1:4433", "10.0.0.2:51000", ipv4HeaderLen},
		{"[fd00::1]:4433", "[fd00::2]:51000", ipv6HeaderLen},
		{"[::ffff:10.0.0.1]:4433", "10.0.0.2:1", ipv4HeaderLen},
	} {
		src, dst := netip.MustParseAddrPort(c.src), netip.MustParseAddrPort(c.dst)
		pkt := appendIPUDPHeader(nil, src, dst, payload)
		if len(pkt) != c.hdr+udpHeaderLen {
			t.Fatalf("%s: header of %d bytes, want %d", c.src, len(pkt), c.hdr+udpHeaderLen)
		}
		if c.hdr == ipv4HeaderLen && fold(inetsum.Sum(0, pkt[:ipv4HeaderLen])) != 0 {
			t.Errorf("%s: bad IPv4 header checksum", c.src)
		}
		// The UDP checksum over pseudo-header, header and payload folds to
		// zero when it is right.
		s, d := src.Addr().Unmap(), dst.Addr().Unmap()
		if c.hdr == ipv6HeaderLen {
			s, d = netip.AddrFrom16(s.As16()), netip.AddrFrom16(d.As16())
		}
		udp := pkt[c.hdr:]
		sum := inetsum.Sum(0, s.AsSlice()) + inetsum.Sum(0, d.AsSlice()) + protoUDP + uint64(len(udp)+len(payload))
		if fold(inetsum.Sum(inetsum.Sum(sum, udp), payload)) != 0 {
			t.Errorf("%s: bad UDP checksum", c.src)
		}
	}
}

func TestMarkCE(t *testing.T) {
	v4 := appendIPUDPHeader(nil, netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:2"), nil)
	if markCE(v4) {
		t.Error("marked a Not-ECT IPv4 packet")
	}
	v4[1] |= 2 // ECT(0)
	v4[10], v4[11] = 0, 0
	copy(v4[10:], []byte{byte(fold(inetsum.Sum(0, v4[:20])) >> 8), byte(fold(inetsum.Sum(0, v4[:20])))})
	if !markCE(v4) || v4[1]&3 != 3 || fold(inetsum.Sum(0, v4[:20])) != 0 {
		t.Errorf("IPv4 ECT(0) packet not marked with a valid checksum: % x", v4[:20])
	}
	v6 := appendIPUDPHeader(nil, netip.MustParseAddrPort("[fd00::1]:1"), netip.MustParseAddrPort("[fd00::2]:2"), nil)
	if markCE(v6) {
		t.Error("marked a Not-ECT IPv6 packet")
	}
	v6[1] |= 0x10 // ECT(1)
	if !markCE(v6) || (v6[1]>>4)&3 != 3 {
		t.Errorf("IPv6 ECT(1) packet not marked: % x", v6[:2])
	}
	if markCE([]byte{0x45}) || markCE(nil) {
		t.Error("marked a truncated packet")
	}
}

func TestTrailerDetectsDamage(t *testing.T) {
	b := appendTrailer([]byte("payload"), 28, trailer{flow: 7, arrival: 12345})
	payload, tr, ok := splitTrailer(b, 28)
	if !ok || string(payload) != "payload" || tr.flow != 7 || tr.arrival != 12345 {
		t.Fatalf("round trip: %q %+v %v", payload, tr, ok)
	}
	for i := len(b) - 28; i < len(b)-28+trailerFields; i++ {
		bad := append([]byte(nil), b...)
		bad[i] ^= 0x40
		if _, _, ok := splitTrailer(bad, 28); ok {
			t.Errorf("damage at trailer byte %d not detected", i-(len(b)-28))
		}
	}
	if _, _, ok := splitTrailer(b[:20], 28); ok {
		t.Error("a datagram shorter than its trailer was accepted")
	}
}
