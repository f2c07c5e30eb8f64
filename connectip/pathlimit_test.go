package connectip_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
)

// limitedEnd is a carrier whose path takes packets of at most limit
// bytes (0: the session's MTU).
type limitedEnd struct {
	*connectiptest.End
	limit int
}

func (e *limitedEnd) PacketLimit() int { return e.limit }

// TestPathLimitAnswersPacketTooBig: while the carrier's path takes less
// than the tunnel's MTU, a larger packet is answered with an ICMP error
// giving the path's size, never below an IPv6 link's 1280 bytes; packets
// between the path's size and 1280 are left to the carrier; when the
// path is whole again, full-size packets go.
func TestPathLimitAnswersPacketTooBig(t *testing.T) {
	a, b := connectiptest.Pipe(connectiptest.Config{})
	end := &limitedEnd{End: a}
	mtu := connectip.Config{MTU: 1500}
	client, _ := sessionsOn(t, newPool(t), end, b, mtu, mtu)

	v4 := func(size int) []byte { return connectip.TestPacket(t, "10.8.0.1", "203.0.113.5", 17, size, 64) }
	v6 := func(size int) []byte { return connectip.TestPacket(t, "fd00:8::1", "2001:db8::5", 17, size, 64) }
	cases := []struct {
		name    string
		limit   int
		p       []byte
		wantMTU int // 0: sent
	}{
		{"whole path, IPv4", 0, v4(1500), 0},
		{"shrunk path, IPv4", 1300, v4(1400), 1300},
		{"shrunk path, IPv4 that fits", 1300, v4(1300), 0},
		{"shrunk path, IPv6", 1300, v6(1400), 1300},
		{"below IPv6's minimum", 1200, v6(1400), 1280},
		{"below IPv6's minimum, left to the carrier", 1200, v6(1280), 0},
		{"path whole again", 0, v6(1500), 0},
	}
	for _, c := range cases {
		end.limit = c.limit
		icmp, err := client.WritePacket(c.p)
		if c.wantMTU == 0 {
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			continue
		}
		if !errors.Is(err, connectip.ErrDropped) {
			t.Fatalf("%s: error %v, want a drop", c.name, err)
		}
		if got := icmpMTU(t, icmp); got != c.wantMTU {
			t.Fatalf("%s: ICMP tells MTU %d, want %d", c.name, got, c.wantMTU)
		}
	}
	if d := client.Stats().Sent.Dropped; d != (connectip.Drops{TooBig: 3}) {
		t.Fatalf("drops %+v, want 3 too big", d)
	}
}

// icmpMTU reads the MTU of an ICMP Fragmentation Needed or ICMPv6 Packet
// Too Big message.
func icmpMTU(t *testing.T, p []byte) int {
	t.Helper()
	switch {
	case len(p) >= 28 && p[0]>>4 == 4 && p[20] == 3 && p[21] == 4:
		return int(binary.BigEndian.Uint16(p[26:28]))
	case len(p) >= 48 && p[0]>>4 == 6 && p[40] == 2:
		return int(binary.BigEndian.Uint32(p[44:48]))
	}
	t.Fatalf("not an ICMP packet-too-big message: % x", p[:min(len(p), 48)])
	return 0
}
