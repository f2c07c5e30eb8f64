package tunnel

import (
	"encoding/binary"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/internal/testkit"
)

// inNewNetns runs fn on a thread moved into a new, empty network
// namespace, so that the interfaces, routes and sockets fn makes touch
// nothing on the host. The thread is never unlocked: it ends with the
// goroutine, and the namespace with its last user.
func inNewNetns(t *testing.T, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			t.Errorf("new network namespace: %v", err)
			return
		}
		fn()
	}()
	<-done
}

func TestTUNInNamespace(t *testing.T) {
	testkit.RequireNamespaces(t, "the TUN device test")
	inNewNetns(t, func() {
		tun, err := OpenTUN(TUNConfig{
			Name: "sqtun0", MTU: 1400,
			Addrs:  []netip.Prefix{netip.MustParsePrefix("10.99.0.1/32"), netip.MustParsePrefix("fd00:99::1/128")},
			Routes: []netip.Prefix{netip.MustParsePrefix("10.99.1.0/24"), netip.MustParsePrefix("fd00:99:1::/64")},
		})
		if err != nil {
			t.Error(err)
			return
		}
		defer tun.Close()
		if ifc, err := net.InterfaceByName("sqtun0"); err != nil || ifc.MTU != 1400 {
			t.Errorf("interface: %+v, %v", ifc, err)
			return
		}
		for _, c := range []struct{ local, remote string }{{"10.99.0.1", "10.99.1.5"}, {"fd00:99::1", "fd00:99:1::5"}} {
			checkTUNPath(t, tun, netip.MustParseAddr(c.local), netip.MustParseAddr(c.remote))
		}
	})
}

// checkTUNPath sends a UDP datagram to remote through the TUN device and
// checks the packet the device reads; writes the reply into the device and
// checks the socket gets it; then answers a 1300-byte datagram sent with
// DF with the ICMP Packet Too Big of connectip and checks that the kernel
// lowered its path MTU to 1280.
func checkTUNPath(t *testing.T, tun *TUN, local, remote netip.Addr) {
	t.Helper()
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(remote, 9)))
	if err != nil {
		t.Errorf("dial: %v", err)
		return
	}
	defer conn.Close()
	setDF(t, conn, local.Is4())
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Errorf("write: %v", err)
		return
	}
	pkt := readUDP(t, tun)
	h, err := connectip.ParseIPHeader(pkt)
	if err != nil || h.Src != local || h.Dst != remote || h.Protocol != 17 || string(pkt[h.PayloadOffset+8:]) != "ping" {
		t.Errorf("read from the device: %+v, %v", h, err)
		return
	}
	localPort := binary.BigEndian.Uint16(pkt[h.PayloadOffset:])
	if err := tun.WritePacket(udpPacket(remote, local, 9, localPort, []byte("pong"))); err != nil {
		t.Errorf("write into the device: %v", err)
		return
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 100)
	if n, err := conn.Read(buf); err != nil || string(buf[:n]) != "pong" {
		t.Errorf("the socket got %q, %v", buf[:n], err)
		return
	}
	if _, err := conn.Write(make([]byte, 1300-h.PayloadOffset-8)); err != nil {
		t.Errorf("write: %v", err)
		return
	}
	big := readUDP(t, tun)
	if len(big) != 1300 {
		t.Errorf("read a %d-byte packet", len(big))
		return
	}
	icmp, err := connectip.PacketTooBig(big, 1280, netip.Addr{})
	if err != nil {
		t.Error(err)
		return
	}
	if err := tun.WritePacket(icmp); err != nil {
		t.Errorf("writing the ICMP error: %v", err)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for pathMTU(t, conn, local.Is4()) != 1280 {
		if time.Now().After(deadline) {
			t.Errorf("IPv%d path MTU stays %d after the ICMP error", h.Version, pathMTU(t, conn, local.Is4()))
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readUDP reads packets from the device until a UDP one comes (the kernel
// may send others, such as IPv6 multicast listener reports).
func readUDP(t *testing.T, tun *TUN) []byte {
	buf := make([]byte, 2000)
	for {
		n, err := tun.ReadPacket(buf)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		if h, err := connectip.ParseIPHeader(buf[:n]); err == nil && h.Protocol == 17 {
			return append([]byte(nil), buf[:n]...)
		}
	}
}

// setDF makes the socket's datagrams unfragmentable, so that the kernel
// takes ICMP errors about them as path MTU information.
func setDF(t *testing.T, c *net.UDPConn, v4 bool) {
	raw, _ := c.SyscallConn()
	raw.Control(func(fd uintptr) {
		if v4 {
			unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
		} else {
			unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IP_PMTUDISC_DO)
		}
	})
}

func pathMTU(t *testing.T, c *net.UDPConn, v4 bool) int {
	raw, _ := c.SyscallConn()
	mtu := -1
	raw.Control(func(fd uintptr) {
		if v4 {
			mtu, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU)
		} else {
			mtu, _ = unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU)
		}
	})
	return mtu
}

// udpPacket builds an IP packet carrying a UDP datagram with a correct
// checksum.
func udpPacket(src, dst netip.Addr, sport, dport uint16, payload []byte) []byte {
	udp := binary.BigEndian.AppendUint16(nil, sport)
	udp = binary.BigEndian.AppendUint16(udp, dport)
	udp = binary.BigEndian.AppendUint16(udp, uint16(8+len(payload)))
	udp = append(udp, 0, 0)
	udp = append(udp, payload...)
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(b))
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	add(src.AsSlice())
	add(dst.AsSlice())
	sum += 17 + uint32(len(udp))
	add(udp)
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(udp[6:], ^uint16(sum))
	var ip []byte
	if src.Is4() {
		ip = []byte{0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0}
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(udp)))
		ip = append(ip, src.AsSlice()...)
		ip = append(ip, dst.AsSlice()...)
		var hs uint32
		for i := 0; i < 20; i += 2 {
			hs += uint32(binary.BigEndian.Uint16(ip[i:]))
		}
		for hs > 0xffff {
			hs = hs&0xffff + hs>>16
		}
		binary.BigEndian.PutUint16(ip[10:], ^uint16(hs))
	} else {
		ip = []byte{0x60, 0, 0, 0, 0, 0, 17, 64}
		binary.BigEndian.PutUint16(ip[4:], uint16(len(udp)))
		ip = append(ip, src.AsSlice()...)
		ip = append(ip, dst.AsSlice()...)
	}
	return append(ip, udp...)
}
