package gateway

import (
	"encoding/binary"
	"testing"

	"github.com/satquic/satquic/tunnel/tunneltest"
)

// TestPathTooSmallAnsweredWithICMP: the server's device takes packets
// larger than the client's QUIC path carries. The first such packet is
// dropped and counted (the server learns the path's size from the
// refusal); every later one is answered with ICMP Fragmentation Needed
// giving the size the path carries (RFC 9484 section 10.1), and a packet
// of that size crosses the tunnel.
func TestPathTooSmallAnsweredWithICMP(t *testing.T) {
	g := startServerOn(t, tunneltest.NewDevice(9000), ServerConfig{Token: testToken, MTU: 9000}, nil)
	ct, err := g.dial(t, testToken)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	dev := forward(t, ct)
	me := ct.Prefixes[0].Addr()

	big := ct.MTU + 500
	g.dev.Inject <- tunneltest.IPv4Packet(testServer, me, big, 1)
	eventually(t, "the first packet too large for the path to be dropped", func() bool { return g.srv.Stats().PathTooSmall == 1 })

	g.dev.Inject <- tunneltest.IPv4Packet(testServer, me, big, 2)
	icmp := g.dev.Expect(t)
	mtu, ok := fragmentationNeeded(icmp)
	if !ok {
		t.Fatalf("the server's device got % x, want ICMP Fragmentation Needed", icmp[:min(len(icmp), 28)])
	}
	if mtu < minTunnelMTU || mtu >= big {
		t.Fatalf("ICMP tells an MTU of %d, want one the path carries, from %d to below %d", mtu, minTunnelMTU, big)
	}
	g.dev.Inject <- tunneltest.IPv4Packet(testServer, me, mtu, 3)
	if p := dev.Expect(t); tunneltest.Seq(p) != 3 || len(p) != mtu {
		t.Fatalf("client got packet %d of %d bytes, want packet 3 of %d", tunneltest.Seq(p), len(p), mtu)
	}
	if n := g.srv.Stats().PathTooSmall; n != 1 {
		t.Errorf("%d packets dropped for the path, want 1", n)
	}
}

// fragmentationNeeded returns the next-hop MTU of p when it is an IPv4
// ICMP Destination Unreachable, Fragmentation Needed (RFC 1191 section 4).
func fragmentationNeeded(p []byte) (int, bool) {
	if len(p) < 28 || p[0]>>4 != 4 || p[9] != 1 {
		return 0, false
	}
	icmp := p[int(p[0]&0x0f)*4:]
	if len(icmp) < 8 || icmp[0] != 3 || icmp[1] != 4 {
		return 0, false
	}
	return int(binary.BigEndian.Uint16(icmp[6:8])), true
}
