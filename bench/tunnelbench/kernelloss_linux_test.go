package tunnelbench

import (
	"net"
	"strings"
	"testing"
	"time"
)

// TestKernelLossRules: the rules drop the asked share, in nft's steps of
// a millionth and as iptables' probability.
func TestKernelLossRules(t *testing.T) {
	for _, tc := range []struct {
		percent   float64
		threshold int64
		prob      string
	}{
		{1, 10_000, "0.01"},
		{0.5, 5_000, "0.005"},
		{0.0001, 1, "0.000001"},
		{25, 250_000, "0.25"},
	} {
		if got := nftThreshold(tc.percent); got != tc.threshold {
			t.Errorf("%g%%: nft threshold %d, want %d", tc.percent, got, tc.threshold)
		}
		if got := iptablesProbability(tc.percent); got != tc.prob {
			t.Errorf("%g%%: iptables probability %s, want %s", tc.percent, got, tc.prob)
		}
	}
	rs := nftRuleset("sqv0", 1)
	for _, want := range []string{`device "sqv0"`, "meta protocol { ip, ip6 }", "numgen random mod 1000000 < 10000", "drop"} {
		if !strings.Contains(rs, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, rs)
		}
	}
}

// TestKernelLossOnVeth: with the loss at 100% on the server's end, UDP
// datagrams from the client do not arrive; the other way they do.
func TestKernelLossOnVeth(t *testing.T) {
	needRoot(t)
	kl, err := findLossTool()
	if err != nil {
		t.Skip(err)
	}
	v, err := startVeth(testPrefix("l"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	for _, ns := range []string{v.client, v.server} {
		if err := inNamespace(ns, func() error { return disableDeviceFeature(vethDevice, udpSegmentationFeature) }); err != nil {
			t.Fatal(err)
		}
	}
	if err := kl.apply(v.server, vethDevice, 99.9999); err != nil {
		t.Fatal(err)
	}
	if got := udpArrivals(t, v.do(v.client), v.do(v.server), v.serverAddr); got != 0 {
		t.Errorf("%d of 20 datagrams crossed a veth that drops them all", got)
	}
	if got := udpArrivals(t, v.do(v.server), v.do(v.client), v.clientAddr); got != 20 {
		t.Errorf("%d of 20 datagrams crossed the veth's lossless direction", got)
	}
}

// udpArrivals sends 20 datagrams from one namespace to a socket on addr in
// the other and counts those that arrive within half a second.
func udpArrivals(t *testing.T, from, to side, addr string) int {
	t.Helper()
	var pc net.PacketConn
	if err := to(func() (err error) { pc, err = net.ListenPacket("udp4", addr+":0"); return err }); err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if err := from(func() error {
		c, err := net.Dial("udp4", pc.LocalAddr().String())
		if err != nil {
			return err
		}
		defer c.Close()
		for range 20 {
			if _, err := c.Write([]byte("loss probe")); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	buf := make([]byte, 64)
	_ = pc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	for {
		if _, _, err := pc.ReadFrom(buf); err != nil {
			return n
		}
		n++
	}
}
