package connectip

import (
	"bytes"
	"net/netip"
	"reflect"
	"testing"
)

func FuzzParseCapsule(f *testing.F) {
	b, _ := AppendAddressAssign(nil, []AssignedAddress{{RequestID: 1, Prefix: mustPrefix("192.0.2.1/32")}})
	f.Add(b)
	f.Add(AppendCapsule(nil, 0x3fff, []byte("xyz")))
	f.Add([]byte{0xc0, 0, 0, 0, 0, 0, 0, 1, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, n, err := ParseCapsule(b)
		rc, rerr := NewCapsuleReader(bytes.NewReader(b)).Next()
		if (err == nil) != (rerr == nil) {
			t.Fatalf("ParseCapsule %v, reader %v", err, rerr)
		}
		if err != nil {
			return
		}
		if n > len(b) || c.Type != rc.Type || !bytes.Equal(c.Payload, rc.Payload) {
			t.Fatalf("the two parsers disagree")
		}
		if again, _, err := ParseCapsule(AppendCapsule(nil, c.Type, c.Payload)); err != nil || !bytes.Equal(again.Payload, c.Payload) {
			t.Fatal("round trip failed")
		}
	})
}

func FuzzParseAddressAssign(f *testing.F) {
	b, _ := AppendAddressAssign(nil, []AssignedAddress{{Prefix: mustPrefix("192.0.2.0/24")}, {RequestID: 9, Prefix: mustPrefix("2001:db8::/64")}})
	c, _, _ := ParseCapsule(b)
	f.Add(c.Payload)
	f.Add([]byte{1, 4, 10, 0, 0, 1, 33})
	f.Fuzz(func(t *testing.T, payload []byte) {
		addrs, err := ParseAddressAssign(payload)
		if err != nil {
			return
		}
		b, err := AppendAddressAssign(nil, addrs)
		if err != nil {
			t.Fatalf("a parsed assignment does not encode: %v", err)
		}
		c, _, _ := ParseCapsule(b)
		if again, err := ParseAddressAssign(c.Payload); err != nil || !reflect.DeepEqual(again, addrs) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzParseAddressRequest(f *testing.F) {
	b, _ := AppendAddressRequest(nil, []RequestedAddress{{RequestID: 1, Prefix: mustPrefix("0.0.0.0/32")}, {RequestID: 2, Prefix: mustPrefix("::/128")}})
	c, _, _ := ParseCapsule(b)
	f.Add(c.Payload)
	f.Add([]byte{0, 4, 0, 0, 0, 0, 32})
	f.Fuzz(func(t *testing.T, payload []byte) {
		reqs, err := ParseAddressRequest(payload)
		if err != nil {
			return
		}
		b, err := AppendAddressRequest(nil, reqs)
		if err != nil {
			t.Fatalf("a parsed request does not encode: %v", err)
		}
		c, _, _ := ParseCapsule(b)
		if again, err := ParseAddressRequest(c.Payload); err != nil || !reflect.DeepEqual(again, reqs) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func FuzzParseRouteAdvertisement(f *testing.F) {
	b, _ := AppendRouteAdvertisement(nil, []IPRoute{RouteFromPrefix(mustPrefix("10.0.0.0/8"), 0), RouteFromPrefix(mustPrefix("2001:db8::/32"), 17)})
	c, _, _ := ParseCapsule(b)
	f.Add(c.Payload)
	f.Add([]byte{4, 10, 0, 0, 9, 10, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, payload []byte) {
		routes, err := ParseRouteAdvertisement(payload)
		if err != nil {
			return
		}
		b, err := AppendRouteAdvertisement(nil, routes)
		if err != nil {
			t.Fatalf("parsed routes do not encode: %v", err)
		}
		if c, _, _ := ParseCapsule(b); !bytes.Equal(c.Payload, payload) {
			t.Fatal("round trip changed the bytes")
		}
		for _, r := range routes {
			for _, p := range r.RangePrefixes() {
				if !r.Contains(p.Addr()) || !r.Contains(lastAddr(p)) {
					t.Fatalf("prefix %v outside %v", p, r)
				}
			}
		}
	})
}

func FuzzParseDatagram(f *testing.F) {
	f.Add(AppendDatagram(nil, 0, []byte{0x45}))
	f.Add([]byte{0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, p, err := ParseDatagram(b)
		if err != nil {
			return
		}
		if !bytes.HasSuffix(b, p) || id > maxVarint {
			t.Fatal("payload is not the datagram's tail")
		}
	})
}

func FuzzParseIPHeader(f *testing.F) {
	f.Add(testPacket(f, "192.0.2.1", "198.51.100.7", 17, 60, 64))
	f.Add(testPacket(f, "2001:db8::1", "2001:db8::2", 6, 100, 9))
	f.Add([]byte{0x60})
	f.Fuzz(func(t *testing.T, p []byte) {
		h, err := ParseIPHeader(p)
		if err != nil {
			return
		}
		if h.PayloadOffset > len(p) || h.HeaderLen > h.PayloadOffset || (h.Version != 4 && h.Version != 6) {
			t.Fatalf("header %+v of a %d-byte packet", h, len(p))
		}
		// Building ICMP errors about any accepted packet must not panic
		// and must give packets that parse.
		for _, build := range []func() ([]byte, error){
			func() ([]byte, error) { return PacketTooBig(p, 1280, netip.Addr{}) },
			func() ([]byte, error) { return TimeExceeded(p, netip.Addr{}) },
		} {
			if icmp, err := build(); err == nil {
				if _, err := ParseIPHeader(icmp); err != nil {
					t.Fatalf("generated ICMP does not parse: %v", err)
				}
			}
		}
		q := append([]byte(nil), p...)
		if decrementHopLimit(q) {
			if _, err := ParseIPHeader(q); err != nil {
				t.Fatalf("after the decrement: %v", err)
			}
		}
	})
}

func FuzzParseScopePath(f *testing.F) {
	f.Add(WellKnownPath + "*/*/")
	f.Add(WellKnownPath + "2001%3Adb8%3A%3A%2F32/17/")
	f.Add(WellKnownPath + "target.example.com/6/")
	f.Fuzz(func(t *testing.T, path string) {
		s, err := ParseScopePath(path)
		if err != nil {
			return
		}
		again, err := ParseScopePath(s.Path())
		if err != nil || again != s {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", path, s, s.Path(), again, err)
		}
	})
}
