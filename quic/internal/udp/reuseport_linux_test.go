//go:build linux

package udp

import (
	"net"
	"testing"
	"time"
)

// TestReusePortSteersByConnectionID binds a group of two sockets, attaches
// the steering program and checks that short-header datagrams reach the
// socket their connection ID names, whatever client port sends them.
func TestReusePortSteersByConnectionID(t *testing.T) {
	conns, err := ListenReusePort("udp4", "127.0.0.1:0", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	if conns[0].LocalAddr().String() != conns[1].LocalAddr().String() {
		t.Fatalf("the sockets are bound to %v and %v", conns[0].LocalAddr(), conns[1].LocalAddr())
	}
	prog, err := SteeringProgram(Steering{Sockets: 2, IDLen: 8, SocketOffset: 0})
	if err != nil {
		t.Fatal(err)
	}
	if err := AttachSteering(conns[0], prog); err != nil {
		t.Skipf("this kernel cannot steer a reuseport group: %v", err)
	}
	for client := range 4 {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		for want := range 2 {
			// Octet values 2 and 3 name sockets 0 and 1 as well.
			for _, octet := range []byte{byte(want), byte(want + 2)} {
				pkt := []byte{0x40, octet, 1, 2, 3, 4, 5, 6, 7, byte(client)}
				if _, err := pc.WriteTo(pkt, conns[0].LocalAddr()); err != nil {
					t.Fatal(err)
				}
				buf := make([]byte, 64)
				if err := conns[want].SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
					t.Fatal(err)
				}
				n, _, err := conns[want].ReadFrom(buf)
				if err != nil {
					t.Fatalf("client %d, octet %d: socket %d got nothing: %v", client, octet, want, err)
				}
				if string(buf[:n]) != string(pkt) {
					t.Fatalf("socket %d read %x, want %x", want, buf[:n], pkt)
				}
			}
		}
		_ = pc.Close()
	}
}

// TestReusePortRefusesTakenPort: a group is not bound on a port another
// socket holds, with SO_REUSEPORT or without, where it would share the
// datagrams with it.
func TestReusePortRefusesTakenPort(t *testing.T) {
	first, err := ListenReusePort("udp4", "127.0.0.1:0", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range first {
			_ = c.Close()
		}
	}()
	if second, err := ListenReusePort("udp4", first[0].LocalAddr().String(), 2); err == nil {
		for _, c := range second {
			_ = c.Close()
		}
		t.Fatal("a second group joined the first one's port")
	}
}
