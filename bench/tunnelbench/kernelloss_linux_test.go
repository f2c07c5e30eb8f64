package tunnelbench

import (
	"context"
	"encoding/binary"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/satquic/satquic/bench"
	"golang.org/x/sys/unix"
)

// TestKernelLossRules: the rules drop the asked share, in nft's steps of
// a millionth, as iptables' probability and as the XDP program's share of
// 2^32.
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
	for percent, want := range map[float64]uint64{1: 42_949_673, 0: 0, 100: 1 << 32, 0.0001: 4_295} {
		if got := xdpThreshold(percent); got != want {
			t.Errorf("%g%%: XDP threshold %d, want %d", percent, got, want)
		}
	}
	rs := nftRuleset("sqv0", 1)
	for _, want := range []string{`device "sqv0"`, "meta protocol { ip, ip6 }", "numgen random mod 1000000 < 10000", "drop"} {
		if !strings.Contains(rs, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, rs)
		}
	}
}

// TestKernelLossOnVeth: with nft's or iptables' loss at 100% on the
// server's end, UDP datagrams from the client do not arrive; the other way
// they do. TestXDPLossOnVeth tests the XDP program.
func TestKernelLossOnVeth(t *testing.T) {
	needRoot(t)
	kl, err := findRuleTool()
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
	remove, err := kl.apply(v.server, vethDevice, 99.9999)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
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

// TestXDPLossOnVeth: with the XDP program at 100% on the server's end, UDP
// datagrams from the client do not arrive; the other way they do; and at
// 0% they all cross.
func TestXDPLossOnVeth(t *testing.T) {
	needRoot(t)
	if err := xdpAvailable(); err != nil {
		t.Skip(err)
	}
	v, err := startVeth(testPrefix("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	var a *xdpAttachment
	if err := inNamespace(v.server, func() (err error) { a, err = attachXDPLoss(vethDevice, 100); return err }); err != nil {
		t.Fatal(err)
	}
	if got := udpArrivals(t, v.do(v.client), v.do(v.server), v.serverAddr); got != 0 {
		t.Errorf("%d of 20 datagrams crossed a veth that drops them all", got)
	}
	if got := udpArrivals(t, v.do(v.server), v.do(v.client), v.clientAddr); got != 20 {
		t.Errorf("%d of 20 datagrams crossed the veth's lossless direction", got)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := inNamespace(v.server, func() (err error) { a, err = attachXDPLoss(vethDevice, 0); return err }); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := udpArrivals(t, v.do(v.client), v.do(v.server), v.serverAddr); got != 20 {
		t.Errorf("%d of 20 datagrams crossed a veth that drops none", got)
	}
}

// TestXDPLossKeepsGRO: behind the XDP program (at 0%), the datagrams of a
// GSO send, cut apart by the sending veth, arrive coalesced again at a
// UDP_GRO socket: more than one datagram per read.
func TestXDPLossKeepsGRO(t *testing.T) {
	needRoot(t)
	if err := xdpAvailable(); err != nil {
		t.Skip(err)
	}
	v, err := startVeth(testPrefix("g"))
	if err != nil {
		t.Fatal(err)
	}
	defer v.close()
	var a *xdpAttachment
	if err := inNamespace(v.server, func() (err error) { a, err = attachXDPLoss(vethDevice, 0); return err }); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var rx *net.UDPConn
	if err := v.do(v.server)(func() error {
		pc, err := net.ListenPacket("udp4", v.serverAddr+":0")
		if err != nil {
			return err
		}
		rx = pc.(*net.UDPConn)
		return setSockopt(rx, unix.IPPROTO_UDP, unix.UDP_GRO, 1)
	}); err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	const segment, segments, sends = 1200, 10, 8
	if err := v.do(v.client)(func() error {
		c, err := net.Dial("udp4", rx.LocalAddr().String())
		if err != nil {
			return err
		}
		defer c.Close()
		oob := make([]byte, unix.CmsgSpace(2))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		h.Level, h.Type = unix.SOL_UDP, unix.UDP_SEGMENT
		h.SetLen(unix.CmsgLen(2))
		binary.NativeEndian.PutUint16(oob[unix.CmsgLen(0):], segment)
		for range sends {
			if _, _, err := c.(*net.UDPConn).WriteMsgUDP(make([]byte, segment*segments), oob, nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Skipf("no UDP GSO send: %v", err)
	}
	buf := make([]byte, 1<<16)
	oob := make([]byte, 64)
	reads, bytes := 0, 0
	_ = rx.SetReadDeadline(time.Now().Add(time.Second))
	for bytes < segment*segments*sends {
		n, _, _, _, err := rx.ReadMsgUDP(buf, oob)
		if err != nil {
			break
		}
		reads++
		bytes += n
	}
	if bytes != segment*segments*sends {
		t.Fatalf("%d of %d bytes arrived", bytes, segment*segments*sends)
	}
	if reads > sends*segments/2 {
		t.Errorf("%d reads for %d datagrams: the veth does not coalesce them", reads, sends*segments)
	}
}

func setSockopt(c *net.UDPConn, level, opt, value int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), level, opt, value) }); err != nil {
		return err
	}
	return serr
}

// TestGoodputLossShort: a second of one flow through the FEC tunnel over
// the veth with 1% loss: data moves, and the client end's QUIC declares
// lost about the share the kernel drops.
func TestGoodputLossShort(t *testing.T) {
	needRoot(t)
	kl, err := findLossTool()
	if err != nil {
		t.Skip(err)
	}
	cfg := GoodputConfig{
		Flows: []int{1}, LossPercents: []float64{1}, Duration: time.Second,
		Prefix: testPrefix("p"), ClientEnd: []string{os.Args[0], clientEndArg},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rs, err := tunnelGoodput(ctx, cfg, TunnelFEC, 1, kl)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("%d results, want 1", len(rs))
	}
	r := rs[0]
	if r.Bytes <= 0 || r.LossMethod != kl.describe(1) {
		t.Fatalf("%d bytes, loss method %q", r.Bytes, r.LossMethod)
	}
	// About 1%: the draws of a second's packets stay well within these.
	sent := r.Client.DatagramsSent
	if lost := r.Client.PacketsLost; sent < 1000 || lost*333 < sent || lost*33 > sent {
		t.Errorf("%d of %d packets declared lost at 1%% loss", lost, sent)
	}
}

// TestDefaultTCPCongestionControl: the kernel's default is read, and is
// one of the controls the kernel has.
func TestDefaultTCPCongestionControl(t *testing.T) {
	cc := DefaultTCPCongestionControl()
	avail, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		t.Skipf("no congestion control list: %v", err)
	}
	if cc == "" || !slices.Contains(strings.Fields(string(avail)), cc) {
		t.Errorf("default %q, available %q", cc, avail)
	}
}

// TestInnerControlSetsCongestion: a listener prepared by innerControl
// runs the asked congestion control, and its accepted connections too.
func TestInnerControlSetsCongestion(t *testing.T) {
	cc := "reno"
	if err := bench.EnsureTCPCongestionControl(cc); err != nil {
		t.Skip(err)
	}
	if innerControl("") != nil {
		t.Error("innerControl(\"\") is not nil")
	}
	lc := net.ListenConfig{Control: innerControl(cc)}
	ln, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	raw, err := a.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got string
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		got, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	}); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	if got != cc {
		t.Errorf("accepted connection runs %q, want %q", got, cc)
	}
}
