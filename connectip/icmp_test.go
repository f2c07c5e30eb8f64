package connectip

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
)

// checkICMP parses an ICMP error the package built, verifies both
// checksums and returns its header, ICMP type, code, the four bytes after
// the checksum, and the quoted packet.
func checkICMP(t *testing.T, b []byte) (IPHeader, uint8, uint8, uint32, []byte) {
	t.Helper()
	h, err := ParseIPHeader(b)
	if err != nil {
		t.Fatalf("ICMP packet: %v", err)
	}
	msg := b[h.HeaderLen:]
	var pseudo uint32
	if h.Version == 6 {
		if h.Protocol != protoICMPv6 {
			t.Fatalf("next header %d", h.Protocol)
		}
		pseudo = pseudoHeaderSum(h.Src, h.Dst, protoICMPv6, len(msg))
	} else if h.Protocol != protoICMP {
		t.Fatalf("protocol %d", h.Protocol)
	}
	if checksum(pseudo, msg) != 0 {
		t.Fatal("ICMP checksum wrong")
	}
	return h, msg[0], msg[1], binary.BigEndian.Uint32(msg[4:8]), msg[8:]
}

func TestPacketTooBigIPv4(t *testing.T) {
	orig := testPacket(t, "10.0.0.2", "203.0.113.9", 6, 1500, 64)
	b, err := PacketTooBig(orig, 1280, netip.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	h, typ, code, rest, quote := checkICMP(t, b)
	if typ != 3 || code != 4 || rest != 1280 {
		t.Fatalf("type %d code %d next-hop MTU %d", typ, code, rest)
	}
	if h.Src != netip.MustParseAddr("203.0.113.9") || h.Dst != netip.MustParseAddr("10.0.0.2") {
		t.Fatalf("from %v to %v", h.Src, h.Dst)
	}
	if len(b) != icmpv4MaxLen || string(quote) != string(orig[:len(quote)]) {
		t.Fatalf("length %d, quote of %d bytes", len(b), len(quote))
	}
	src := netip.MustParseAddr("10.0.0.1")
	if b, _ := PacketTooBig(orig, 1280, src); netip.AddrFrom4([4]byte(b[12:16])) != src {
		t.Fatal("the configured source was not used")
	}
}

func TestPacketTooBigIPv6(t *testing.T) {
	orig := testPacket(t, "2001:db8::2", "2001:db8:1::9", 17, 1400, 64)
	b, err := PacketTooBig(orig, 1300, netip.MustParseAddr("2001:db8::1"))
	if err != nil {
		t.Fatal(err)
	}
	h, typ, code, rest, quote := checkICMP(t, b)
	if typ != 2 || code != 0 || rest != 1300 {
		t.Fatalf("type %d code %d MTU %d", typ, code, rest)
	}
	if h.Src != netip.MustParseAddr("2001:db8::1") || h.Dst != netip.MustParseAddr("2001:db8::2") {
		t.Fatalf("from %v to %v", h.Src, h.Dst)
	}
	if len(b) != icmpv6MaxLen || string(quote) != string(orig[:len(quote)]) {
		t.Fatalf("length %d", len(b))
	}
	small := testPacket(t, "2001:db8::2", "2001:db8:1::9", 17, 100, 64)
	if b, _ := PacketTooBig(small, 80, netip.Addr{}); len(b) != 40+8+100 {
		t.Fatalf("a small packet is quoted whole: %d bytes", len(b))
	}
}

func TestTimeExceeded(t *testing.T) {
	for _, orig := range [][]byte{
		testPacket(t, "10.0.0.2", "203.0.113.9", 17, 200, 1),
		testPacket(t, "2001:db8::2", "2001:db8:1::9", 17, 200, 1),
	} {
		b, err := TimeExceeded(orig, netip.Addr{})
		if err != nil {
			t.Fatal(err)
		}
		h, typ, code, _, _ := checkICMP(t, b)
		want := uint8(11)
		if h.Version == 6 {
			want = 3
		}
		if typ != want || code != 0 {
			t.Fatalf("IPv%d: type %d code %d", h.Version, typ, code)
		}
	}
}

func TestNoICMPAboutICMPErrors(t *testing.T) {
	orig := testPacket(t, "10.0.0.2", "203.0.113.9", 6, 1500, 64)
	ptb, _ := PacketTooBig(orig, 1280, netip.Addr{})
	if _, err := PacketTooBig(ptb, 100, netip.Addr{}); !errors.Is(err, errNoICMP) {
		t.Fatalf("an ICMP error was answered: %v", err)
	}
	echo := testPacket(t, "10.0.0.2", "203.0.113.9", protoICMP, 1500, 64)
	echo[20] = 8
	if _, err := PacketTooBig(echo, 1280, netip.Addr{}); err != nil {
		t.Fatalf("an echo request was not answered: %v", err)
	}
	for _, p := range [][]byte{
		testPacket(t, "0.0.0.0", "203.0.113.9", 6, 100, 64),
		testPacket(t, "10.0.0.2", "224.0.0.1", 17, 100, 64),
		testPacket(t, "2001:db8::2", "2001:db8::3", protoICMPv6, 100, 64), // type 0 < 128: an error
	} {
		if _, err := TimeExceeded(p, netip.Addr{}); !errors.Is(err, errNoICMP) {
			t.Errorf("answered: %v", err)
		}
	}
	frag := testPacket(t, "10.0.0.2", "203.0.113.9", 17, 100, 64)
	binary.BigEndian.PutUint16(frag[6:8], 100) // a later fragment
	binary.BigEndian.PutUint16(frag[10:12], 0)
	binary.BigEndian.PutUint16(frag[10:12], checksum(0, frag[:20]))
	if _, err := PacketTooBig(frag, 50, netip.Addr{}); !errors.Is(err, errNoICMP) {
		t.Fatalf("a non-first fragment was answered: %v", err)
	}
	if _, err := PacketTooBig([]byte{0x45}, 50, netip.Addr{}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("junk: %v", err)
	}
}
