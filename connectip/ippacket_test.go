package connectip

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

func TestParseIPHeader(t *testing.T) {
	p4 := testPacket(t, "192.0.2.1", "198.51.100.7", 17, 60, 64)
	h, err := ParseIPHeader(p4)
	if err != nil {
		t.Fatal(err)
	}
	want := IPHeader{Version: 4, Src: netip.MustParseAddr("192.0.2.1"), Dst: netip.MustParseAddr("198.51.100.7"),
		Protocol: 17, HopLimit: 64, HeaderLen: 20, PayloadOffset: 20}
	if h != want {
		t.Fatalf("IPv4: %+v", h)
	}
	p6 := testPacket(t, "2001:db8::1", "2001:db8::2", 6, 100, 9)
	if h, err = ParseIPHeader(p6); err != nil || h.Version != 6 || h.Protocol != 6 || h.HopLimit != 9 || h.PayloadOffset != 40 ||
		h.Dst != netip.MustParseAddr("2001:db8::2") {
		t.Fatalf("IPv6: %+v %v", h, err)
	}
	for i := range len(p4) {
		if _, err := ParseIPHeader(p4[:i]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("IPv4 prefix of %d bytes: %v", i, err)
		}
	}
	for i := range len(p6) {
		if _, err := ParseIPHeader(p6[:i]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("IPv6 prefix of %d bytes: %v", i, err)
		}
	}
	bad := append([]byte(nil), p4...)
	bad[12]++ // the checksum no longer matches
	if _, err := ParseIPHeader(bad); !errors.Is(err, ErrMalformed) {
		t.Fatalf("bad checksum: %v", err)
	}
	bad = append([]byte(nil), p4...)
	bad[0] = 0x44 // a header length below 20
	if _, err := ParseIPHeader(bad); !errors.Is(err, ErrMalformed) {
		t.Fatalf("IHL 4: %v", err)
	}
	if _, err := ParseIPHeader(append(p6, 0)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("IPv6 with a trailing byte: %v", err)
	}
}

func TestIPv6ExtensionHeaders(t *testing.T) {
	// Hop-by-hop options (8 bytes), then a fragment header, then UDP.
	ext := []byte{extFragment, 0, 1, 4, 0, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 1}
	p := testPacket(t, "2001:db8::1", "2001:db8::2", extHopByHop, 40+len(ext)+8, 64)
	copy(p[40:], ext)
	h, err := ParseIPHeader(p)
	if err != nil || h.Protocol != 17 || h.PayloadOffset != 56 {
		t.Fatalf("%+v %v", h, err)
	}
	// A chain longer than the bound is refused rather than walked.
	long := testPacket(t, "2001:db8::1", "2001:db8::2", extDestOptions, 40+8*(maxExtHeaders+1), 64)
	for i := range maxExtHeaders + 1 {
		long[40+8*i], long[41+8*i] = extDestOptions, 0
	}
	if _, err := ParseIPHeader(long); !errors.Is(err, ErrMalformed) {
		t.Fatalf("long chain: %v", err)
	}
}

func TestDecrementHopLimit(t *testing.T) {
	for ttl := range 256 {
		p := testPacket(t, "192.0.2.1", "198.51.100.7", 6, 40, uint8(ttl))
		p[1] = byte(ttl * 7) // vary the checksum
		binary.BigEndian.PutUint16(p[10:12], 0)
		binary.BigEndian.PutUint16(p[10:12], checksum(0, p[:20]))
		ok := decrementHopLimit(p)
		if ok != (ttl > 1) {
			t.Fatalf("TTL %d: %v", ttl, ok)
		}
		if ok && (p[8] != uint8(ttl-1) || checksum(0, p[:20]) != 0) {
			t.Fatalf("TTL %d: now %d, checksum %#x", ttl, p[8], checksum(0, p[:20]))
		}
	}
	p := testPacket(t, "2001:db8::1", "2001:db8::2", 6, 40, 2)
	if !decrementHopLimit(p) || p[7] != 1 || decrementHopLimit(p) || p[7] != 1 {
		t.Fatalf("IPv6 hop limit %d", p[7])
	}
}
