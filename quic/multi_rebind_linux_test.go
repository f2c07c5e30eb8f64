//go:build linux

package quic

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/bpf"
)

// portHoppingRelay stands for a NAT that rebinds: it forwards a client's
// datagrams to the server from a new port every few datagrams once the
// handshake is under way, and returns the server's answers from any of
// them, so that the connection goes on while its datagrams reach the
// server from many 4-tuples, which the kernel's hash spreads over a
// socket group's sockets.
type portHoppingRelay struct {
	front  net.PacketConn
	server net.Addr
	every  int

	mu     sync.Mutex
	client net.Addr
	backs  []net.PacketConn
	closed bool // no new port opens: close has closed them
	wg     sync.WaitGroup
}

func newPortHoppingRelay(t *testing.T, server string, every int) *portHoppingRelay {
	t.Helper()
	front, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	to, err := net.ResolveUDPAddr("udp4", server)
	if err != nil {
		t.Fatal(err)
	}
	r := &portHoppingRelay{front: front, server: to, every: every}
	r.wg.Go(r.forward)
	t.Cleanup(r.close)
	return r
}

func (r *portHoppingRelay) addr() string { return r.front.LocalAddr().String() }

// forward carries the client's datagrams, moving to a new port every
// r.every datagrams after the first ten, by which time the client's
// address is validated (RFC 9000 section 8.1) and the server accepts it
// from elsewhere.
func (r *portHoppingRelay) forward() {
	buf := make([]byte, 65536)
	for sent := 0; ; sent++ {
		n, from, err := r.front.ReadFrom(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.client = from
		r.mu.Unlock()
		if len(r.backs) == 0 || (sent > 10 && sent%r.every == 0) {
			if !r.rebind() {
				return
			}
		}
		_, _ = r.backs[len(r.backs)-1].WriteTo(buf[:n], r.server)
	}
}

// rebind opens the next port and starts carrying the server's answers
// from it back to the client.
func (r *portHoppingRelay) rebind() bool {
	back, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return false
	}
	r.mu.Lock()
	if r.closed {
		// close ran while the port opened: its reader would wait for
		// ever on a socket nobody closes.
		r.mu.Unlock()
		_ = back.Close()
		return false
	}
	r.backs = append(r.backs, back)
	r.mu.Unlock()
	r.wg.Go(func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := back.ReadFrom(buf)
			if err != nil {
				return
			}
			r.mu.Lock()
			client := r.client
			r.mu.Unlock()
			_, _ = r.front.WriteTo(buf[:n], client)
		}
	})
	return true
}

func (r *portHoppingRelay) close() {
	_ = r.front.Close()
	r.mu.Lock()
	r.closed = true
	for _, b := range r.backs {
		_ = b.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// foreignThroughRebinding runs connections through rebinding relays to a
// two-socket server and returns its sockets' counters.
func foreignThroughRebinding(t *testing.T) []SocketStats {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr, addr := serveMulti(t, ctx, 2, nil, nil)
	if tr.Sockets() != 2 {
		t.Skipf("no socket group here: %v", tr.SocketFallback())
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		r := newPortHoppingRelay(t, addr, 4)
		wg.Go(func() { errs <- multiEchoClient(ctx, r.addr(), 4, 30000) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	stats := tr.SocketStats()
	t.Logf("sockets: %+v", stats)
	return stats
}

// TestMultiSocketSteeringAcrossRebinding sends connections through NATs
// that rebind: with the steering program every datagram still reaches the
// socket that owns its connection; without it (the kernel's hash alone)
// some reach the other socket, which shows that the first half of the test
// can fail.
func TestMultiSocketSteeringAcrossRebinding(t *testing.T) {
	t.Run("steered", func(t *testing.T) {
		for i, s := range foreignThroughRebinding(t) {
			if s.Foreign != 0 {
				t.Errorf("socket %d received %d datagrams of connections the other owns", i, s.Foreign)
			}
		}
	})
	t.Run("hash only", func(t *testing.T) {
		old := attachSteering
		attachSteering = func(*net.UDPConn, []bpf.RawInstruction) error { return nil }
		defer func() { attachSteering = old }()
		var foreign uint64
		for _, s := range foreignThroughRebinding(t) {
			foreign += s.Foreign
		}
		if foreign == 0 {
			t.Error("no datagram reached a foreign socket without steering: the relays did not rebind")
		}
	})
}
