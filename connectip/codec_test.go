package connectip

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"reflect"
	"testing"
)

func TestVarintRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, maxVarint} {
		b := appendVarint(nil, v)
		if len(b) != varintLen(v) {
			t.Errorf("%d: %d bytes, want %d", v, len(b), varintLen(v))
		}
		got, n, err := parseVarint(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("%d: got %d, %d, %v", v, got, n, err)
		}
		for i := range b {
			if _, _, err := parseVarint(b[:i]); err == nil {
				t.Errorf("%d: prefix of %d bytes parsed", v, i)
			}
		}
	}
}

func TestCapsuleRoundTripAndTruncation(t *testing.T) {
	payload := bytes.Repeat([]byte{7}, 300)
	b := AppendCapsule(nil, 0x1234, payload)
	c, n, err := ParseCapsule(b)
	if err != nil || n != len(b) || c.Type != 0x1234 || !bytes.Equal(c.Payload, payload) {
		t.Fatalf("round trip: %+v %d %v", c.Type, n, err)
	}
	for i := 1; i < len(b); i++ {
		if _, _, err := ParseCapsule(b[:i]); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("prefix of %d bytes: %v, want io.ErrUnexpectedEOF", i, err)
		}
		r := NewCapsuleReader(bytes.NewReader(b[:i]))
		if _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("reader, prefix of %d bytes: %v, want io.ErrUnexpectedEOF", i, err)
		}
	}
	r := NewCapsuleReader(bytes.NewReader(append(b, b...)))
	for range 2 {
		if c, err := r.Next(); err != nil || !bytes.Equal(c.Payload, payload) {
			t.Fatalf("reader: %v", err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("reader at the end: %v, want io.EOF", err)
	}
}

func TestCapsuleTooLarge(t *testing.T) {
	b := appendVarint(appendVarint(nil, CapsuleAddressAssign), MaxCapsulePayload+1)
	if _, _, err := ParseCapsule(b); !errors.Is(err, ErrCapsuleTooLarge) {
		t.Fatalf("ParseCapsule: %v", err)
	}
	if _, err := NewCapsuleReader(bytes.NewReader(b)).Next(); !errors.Is(err, ErrCapsuleTooLarge) {
		t.Fatalf("reader: %v", err)
	}
}

func TestAddressAssignRoundTrip(t *testing.T) {
	in := []AssignedAddress{
		{RequestID: 0, Prefix: mustPrefix("192.0.2.11/32")},
		{RequestID: 1000, Prefix: mustPrefix("2001:db8:1234::/48")},
		{RequestID: 3, Prefix: mustPrefix("0.0.0.0/32")},
	}
	b, err := AppendAddressAssign(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := ParseCapsule(b)
	if err != nil || c.Type != CapsuleAddressAssign {
		t.Fatalf("capsule: %v %v", c.Type, err)
	}
	got, err := ParseAddressAssign(c.Payload)
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("got %v, %v", got, err)
	}
	if !got[2].Rejected() || got[0].Rejected() {
		t.Fatal("Rejected is wrong")
	}
	// 4 + 1 + 4 + 1 bytes for the first entry (RFC 9484 figure 8).
	if len(c.Payload) != 7+(2+1+16+1)+7 {
		t.Fatalf("payload of %d bytes", len(c.Payload))
	}
	for i := range len(c.Payload) {
		if _, err := ParseAddressAssign(c.Payload[:i]); i != 0 && i != 7 && i != 27 && err == nil {
			t.Fatalf("prefix of %d bytes parsed", i)
		}
	}
	if empty, err := ParseAddressAssign(nil); err != nil || len(empty) != 0 {
		t.Fatalf("empty assignment: %v %v", empty, err)
	}
}

func TestAddressEntryRules(t *testing.T) {
	entry := func(id uint64, version byte, addr []byte, bits byte) []byte {
		b := appendVarint(nil, id)
		b = append(b, version)
		b = append(b, addr...)
		return append(b, bits)
	}
	v4 := []byte{192, 0, 2, 0}
	cases := map[string][]byte{
		"version 5":            entry(1, 5, v4, 32),
		"prefix beyond 32":     entry(1, 4, v4, 33),
		"host bits set":        entry(1, 4, []byte{192, 0, 2, 1}, 24),
		"IPv6 address short":   entry(1, 6, v4, 32),
		"prefix length absent": entry(1, 4, v4, 0)[:6],
	}
	for name, b := range cases {
		if _, err := ParseAddressAssign(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("assign, %s: %v", name, err)
		}
		if _, err := ParseAddressRequest(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("request, %s: %v", name, err)
		}
	}
	ok := entry(1, 4, v4, 24)
	if _, err := ParseAddressRequest(ok); err != nil {
		t.Fatalf("valid request: %v", err)
	}
	for name, b := range map[string][]byte{
		"request ID 0":       entry(0, 4, v4, 24),
		"request ID reused":  append(append([]byte{}, ok...), ok...),
		"no address at all":  nil,
		"trailing junk byte": append(append([]byte{}, ok...), 1),
	} {
		if _, err := ParseAddressRequest(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("request, %s: %v", name, err)
		}
	}
	if _, err := AppendAddressRequest(nil, nil); err == nil {
		t.Error("an empty request was encoded")
	}
	if _, err := AppendAddressAssign(nil, []AssignedAddress{{Prefix: mustPrefix("::ffff:1.2.3.4/128")}}); err == nil {
		t.Error("an IPv4-mapped address was encoded")
	}
}

func TestRouteAdvertisementRoundTrip(t *testing.T) {
	in := []IPRoute{
		RouteFromPrefix(mustPrefix("10.0.0.0/8"), 0),
		RouteFromPrefix(mustPrefix("192.168.0.0/16"), 0),
		RouteFromPrefix(mustPrefix("203.0.113.0/24"), 17),
		{Start: netip.MustParseAddr("::"), End: netip.MustParseAddr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")},
	}
	b, err := AppendRouteAdvertisement(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := ParseCapsule(b)
	if err != nil || c.Type != CapsuleRouteAdvertisement {
		t.Fatal(err)
	}
	got, err := ParseRouteAdvertisement(c.Payload)
	if err != nil || !reflect.DeepEqual(got, in) {
		t.Fatalf("got %v, %v", got, err)
	}
	if len(c.Payload) != 3*10+34 {
		t.Fatalf("payload of %d bytes", len(c.Payload))
	}
	for i := 1; i < len(c.Payload); i++ {
		if i%10 == 0 && i <= 30 {
			continue
		}
		if _, err := ParseRouteAdvertisement(c.Payload[:i]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix of %d bytes: %v", i, err)
		}
	}
}

func TestRouteRules(t *testing.T) {
	r := func(start, end string, proto uint8) IPRoute {
		return IPRoute{Start: netip.MustParseAddr(start), End: netip.MustParseAddr(end), Protocol: proto}
	}
	bad := map[string][]IPRoute{
		"end before start":        {r("10.0.0.9", "10.0.0.1", 0)},
		"versions mixed":          {r("10.0.0.1", "::1", 0)},
		"IPv6 before IPv4":        {r("::1", "::2", 0), r("10.0.0.1", "10.0.0.2", 0)},
		"protocols out of order":  {r("10.0.0.1", "10.0.0.2", 17), r("10.0.1.1", "10.0.1.2", 6)},
		"same range twice":        {r("10.0.0.1", "10.0.0.2", 6), r("10.0.0.1", "10.0.0.2", 6)},
		"touching ranges":         {r("10.0.0.1", "10.0.0.5", 6), r("10.0.0.5", "10.0.0.9", 6)},
		"overlap with protocol 0": {r("10.0.0.0", "10.0.0.255", 0), r("10.0.0.7", "10.0.0.7", 17)},
	}
	for name, routes := range bad {
		if err := CheckRoutes(routes); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := AppendRouteAdvertisement(nil, routes); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
	good := []IPRoute{
		r("10.0.0.0", "10.0.0.255", 0), r("10.0.2.0", "10.0.2.255", 0),
		r("10.0.1.0", "10.0.1.255", 6), r("10.0.3.0", "10.0.3.255", 17), r("10.0.1.0", "10.0.1.255", 17),
		r("2001:db8::", "2001:db8::ffff", 0),
	}
	SortRoutes(good)
	if err := CheckRoutes(good); err != nil {
		t.Fatalf("sorted routes: %v", err)
	}
}

func TestRouteAllows(t *testing.T) {
	udp := RouteFromPrefix(mustPrefix("198.51.100.0/24"), 17)
	dst := netip.MustParseAddr("198.51.100.2")
	if !udp.Allows(dst, 17) || udp.Allows(dst, 6) || !udp.Allows(dst, protoICMP) {
		t.Fatal("protocol rule wrong: UDP route must allow UDP and ICMP only")
	}
	if udp.Allows(netip.MustParseAddr("198.51.101.2"), 17) || udp.Allows(netip.MustParseAddr("::1"), 17) {
		t.Fatal("address outside the route allowed")
	}
}

func TestRangePrefixes(t *testing.T) {
	r := IPRoute{Start: netip.MustParseAddr("10.0.0.1"), End: netip.MustParseAddr("10.0.0.10")}
	want := []netip.Prefix{mustPrefix("10.0.0.1/32"), mustPrefix("10.0.0.2/31"), mustPrefix("10.0.0.4/30"), mustPrefix("10.0.0.8/31"), mustPrefix("10.0.0.10/32")}
	if got := r.RangePrefixes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	all := IPRoute{Start: netip.MustParseAddr("::"), End: netip.MustParseAddr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff")}
	if got := all.RangePrefixes(); !reflect.DeepEqual(got, []netip.Prefix{mustPrefix("::/0")}) {
		t.Fatalf("everything: %v", got)
	}
	if got := RouteFromPrefix(mustPrefix("0.0.0.0/0"), 0).RangePrefixes(); !reflect.DeepEqual(got, []netip.Prefix{mustPrefix("0.0.0.0/0")}) {
		t.Fatalf("IPv4 everything: %v", got)
	}
}

func TestDatagram(t *testing.T) {
	b := AppendDatagram(nil, 0, []byte{0x45, 1})
	if !bytes.Equal(b, []byte{0, 0x45, 1}) {
		t.Fatalf("%x", b)
	}
	id, p, err := ParseDatagram(AppendDatagram(nil, 1<<20, []byte("x")))
	if err != nil || id != 1<<20 || string(p) != "x" {
		t.Fatalf("%d %q %v", id, p, err)
	}
	if _, _, err := ParseDatagram([]byte{0x80, 0}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("truncated context ID: %v", err)
	}
	if _, _, err := ParseDatagram(nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("empty: %v", err)
	}
}
