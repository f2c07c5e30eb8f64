package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

// serveDownload accepts one connection on l and answers its first stream
// with body; the accepted connection goes to conns.
func serveDownload(ctx context.Context, l *Listener, body []byte, conns chan<- *Conn) {
	c, err := l.Accept(ctx)
	if err != nil {
		return
	}
	conns <- c
	s, err := c.AcceptStream(ctx)
	if err != nil {
		return
	}
	_, _ = io.Copy(io.Discard, s)
	_, _ = s.Write(body)
	_ = s.Close()
}

// requestDownload opens a stream on c, sends a request and returns the
// stream to read the answer from.
func requestDownload(t *testing.T, c *Conn) *Stream {
	t.Helper()
	s, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

// A client moves its connection to a new socket in the middle of a
// download over loopback: the probe is answered, everything goes from
// and to the new socket, the server follows and validates it, and the
// download completes intact.
func TestMigrateLoopback(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := testkit.Payload(8<<20, 3)
	conns := make(chan *Conn, 1)
	go serveDownload(ctx, l, body, conns)
	c, err := DialAddr(ctx, l.Addr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s := requestDownload(t, c)
	got := make([]byte, 1<<20)
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if err := c.Migrate(ctx, pc); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	rest, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if got = append(got, rest...); !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, not the %d-byte body", len(got), len(body))
	}
	if c.LocalAddr().String() != pc.LocalAddr().String() {
		t.Errorf("the client sends from %v, not %v", c.LocalAddr(), pc.LocalAddr())
	}
	sc := <-conns
	if sc.RemoteAddr().String() != pc.LocalAddr().String() {
		t.Errorf("the server sends to %v, not %v", sc.RemoteAddr(), pc.LocalAddr())
	}
	cs, ss := c.Stats().Migration, sc.Stats().Migration
	if cs.Migrations != 1 || ss.PeerAddressChanges != 1 || ss.ValidationsSucceeded != 1 {
		t.Errorf("client %+v, server %+v: want one migration the server followed and validated", cs, ss)
	}
	t.Logf("client %+v; server %+v", cs, ss)
	// The client's CONNECTION_CLOSE goes from the new socket too.
	c.CloseWithError(0, "")
	select {
	case <-sc.Context().Done():
	case <-time.After(5 * time.Second):
		t.Error("the server did not see the client's CONNECTION_CLOSE")
	}
}

// Migrate refuses when the server disabled active migration, and gives up
// on a socket whose path never answers.
func TestMigrateRefused(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), &Config{DisableActiveMigration: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conns := make(chan *Conn, 1)
	go serveDownload(ctx, l, []byte("x"), conns)
	c, err := DialAddr(ctx, l.Addr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if err := c.Migrate(ctx, pc); !errors.Is(err, ErrMigrationDisabled) {
		t.Errorf("Migrate to a server that disabled it: %v", err)
	}
	sc := <-conns
	if err := sc.Migrate(ctx, pc); err == nil {
		t.Error("a server connection migrated")
	}
}

// rebindingRelay stands for a NAT between a client and a server: it
// forwards the client's datagrams to the server from an outside socket,
// and the server's back; rebind gives it a new outside socket (a new
// port), and what the server still sends to the old one is lost.
type rebindingRelay struct {
	inside *net.UDPConn
	server *net.UDPAddr

	mu      sync.Mutex
	client  net.Addr
	outside *net.UDPConn
	wg      sync.WaitGroup
}

func newRebindingRelay(t *testing.T, server *net.UDPAddr) *rebindingRelay {
	t.Helper()
	in, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &rebindingRelay{inside: in, server: server}
	r.rebind(t)
	r.wg.Add(1)
	go r.fromClient()
	return r
}

// rebind opens a new outside socket and closes the old one.
func (r *rebindingRelay) rebind(t *testing.T) {
	out, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	old := r.outside
	r.outside = out
	r.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	r.wg.Add(1)
	go r.fromServer(out)
}

func (r *rebindingRelay) outsideAddr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outside.LocalAddr().String()
}

func (r *rebindingRelay) fromClient() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := r.inside.ReadFrom(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.client = from
		out := r.outside
		r.mu.Unlock()
		_, _ = out.WriteTo(buf[:n], r.server)
	}
}

func (r *rebindingRelay) fromServer(out *net.UDPConn) {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, _, err := out.ReadFrom(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		client := r.client
		r.mu.Unlock()
		if client != nil {
			_, _ = r.inside.WriteTo(buf[:n], client)
		}
	}
}

func (r *rebindingRelay) close() {
	_ = r.inside.Close()
	r.mu.Lock()
	_ = r.outside.Close()
	r.mu.Unlock()
	r.wg.Wait()
}

// A NAT rebinding in the middle of a download over real sockets: the
// relay between client and server changes its outside port, the server
// follows the client to it, and the download completes intact.
func TestNATRebindingLoopback(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	body := testkit.Payload(8<<20, 5)
	conns := make(chan *Conn, 1)
	go serveDownload(ctx, l, body, conns)
	relay := newRebindingRelay(t, l.Addr().(*net.UDPAddr))
	defer relay.close()
	c, err := DialAddr(ctx, relay.inside.LocalAddr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s := requestDownload(t, c)
	got := make([]byte, 1<<20)
	if _, err := io.ReadFull(s, got); err != nil {
		t.Fatal(err)
	}
	relay.rebind(t)
	rest, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if got = append(got, rest...); !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, not the %d-byte body", len(got), len(body))
	}
	sc := <-conns
	if sc.RemoteAddr().String() != relay.outsideAddr() {
		t.Errorf("the server sends to %v, not the relay's new port %v", sc.RemoteAddr(), relay.outsideAddr())
	}
	ss := sc.Stats().Migration
	if ss.PeerAddressChanges != 1 || ss.PortChanges != 1 || ss.ValidationsSucceeded != 1 || ss.CongestionResets != 0 {
		t.Errorf("server %+v: want one port change, validated, the congestion state kept", ss)
	}
	t.Logf("server %+v", ss)
}

// A server with a preferred address (Transport.PreferredConn): the client
// moves there once its handshake is confirmed, and the server answers
// from it; a download completes intact.
func TestPreferredAddressLoopback(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	main, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer main.Close()
	pref, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer pref.Close()
	st := &Transport{Conn: main, PreferredConn: pref}
	defer st.Close()
	l, err := st.Listen(serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	body := testkit.Payload(4<<20, 17)
	conns := make(chan *Conn, 1)
	go serveDownload(ctx, l, body, conns)
	c, err := DialAddr(ctx, main.LocalAddr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s := requestDownload(t, c)
	got, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, not the %d-byte body", len(got), len(body))
	}
	if c.RemoteAddr().String() != pref.LocalAddr().String() {
		t.Errorf("the client sends to %v, not the preferred %v", c.RemoteAddr(), pref.LocalAddr())
	}
	sc := <-conns
	if sc.LocalAddr().String() != pref.LocalAddr().String() {
		t.Errorf("the server sends from %v, not the preferred %v", sc.LocalAddr(), pref.LocalAddr())
	}
	if m := c.Stats().Migration; m.PeerAddressChanges != 1 || m.ChallengesSent != 1 {
		t.Errorf("client %+v: want one move to the preferred address", m)
	}
}
