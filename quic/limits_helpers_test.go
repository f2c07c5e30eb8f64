package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
	"github.com/satquic/satquic/quic/internal/wire"
)

// The limits tests attack a server over memnet from many client
// addresses and sockets, in a synctest bubble.

// limitsEnv is a listening server that clients reach from any address,
// each over a path of its own with 10 ms of delay each way.
type limitsEnv struct {
	t      *testing.T
	n      *memnet.Network
	server *Transport
	l      *Listener
	// ctx ends the dials of silent clients at cleanup.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	nodes   map[netip.Addr]bool // addresses with a path to the server
	clients []*Transport
	// outcomes counts how the dials of silent clients ended.
	outcomes map[string]int
	// byClient are the connections the server accepted, by client.
	byClient map[netip.AddrPort]*Conn
	dials    sync.WaitGroup
}

// newLimitsEnv starts a server with sconf that serves downloads (see
// serveDownloads); the test's cleanup stops everything.
func newLimitsEnv(t *testing.T, sconf *Config) *limitsEnv {
	t.Helper()
	e := &limitsEnv{t: t, n: memnet.New(memnet.Config{Seed: 1}), nodes: map[netip.Addr]bool{}, outcomes: map[string]int{},
		byClient: map[netip.AddrPort]*Conn{}}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	spc, err := e.n.Listen(memServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	e.server = &Transport{Conn: spc}
	if e.l, err = e.server.Listen(serverTLS(), sconf); err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	l := e.l // a test may replace e.l; this loop serves the first
	go func() {
		defer close(served)
		serveDownloads(l, e.accepted)
	}()
	t.Cleanup(func() {
		e.cancel()
		e.dials.Wait()
		for _, c := range e.clients {
			_ = c.Close()
		}
		if err := e.server.Close(); err != nil {
			t.Errorf("server Transport.Close: %v", err)
		}
		<-served
		_ = e.n.Close()
	})
	return e
}

// socket opens a client socket at addr, joining addr's node to the server
// on first use.
func (e *limitsEnv) socket(addr netip.AddrPort) *memnet.Conn {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.nodes[addr.Addr()] {
		link := netsim.LinkConfig{Delay: 10 * time.Millisecond}
		if _, err := e.n.AddPath(addr.Addr(), memServerAddr.Addr(), link, link); err != nil {
			e.t.Fatal(err)
		}
		e.nodes[addr.Addr()] = true
	}
	pc, err := e.n.Listen(addr)
	if err != nil {
		e.t.Fatal(err)
	}
	return pc
}

// client returns a client Transport at addr, over pc if set.
func (e *limitsEnv) client(addr netip.AddrPort, pc net.PacketConn) *Transport {
	e.t.Helper()
	if pc == nil {
		pc = e.socket(addr)
	}
	tr := &Transport{Conn: pc}
	e.mu.Lock()
	e.clients = append(e.clients, tr)
	e.mu.Unlock()
	return tr
}

// silentClient returns a client Transport at addr whose connections send
// their first Initial and, after a Retry, the Initial with its token, and
// nothing else: the attack of issue #13.
func (e *limitsEnv) silentClient(addr netip.AddrPort) *Transport {
	return e.client(addr, &silentConn{Conn: e.socket(addr), sent: map[string]uint8{}})
}

// dialSilent starts n connection attempts on tr that never complete; their
// outcomes are counted when they end, at the latest at cleanup.
func (e *limitsEnv) dialSilent(tr *Transport, n int) {
	for range n {
		e.dials.Go(func() {
			_, err := tr.Dial(e.ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), nil)
			e.mu.Lock()
			e.outcomes[outcome(err)]++
			e.mu.Unlock()
		})
	}
}

// outcome names how a dial ended.
func outcome(err error) string {
	var te *TransportError
	switch {
	case err == nil:
		return "connected"
	case errors.As(err, &te) && te.Remote:
		return "closed by server: " + te.ErrorCode.String()
	case errors.Is(err, context.Canceled):
		return "still waiting"
	}
	return err.Error()
}

// outcomesNow returns the outcomes counted so far.
func (e *limitsEnv) outcomesNow() map[string]int {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int{}
	for k, v := range e.outcomes {
		out[k] = v
	}
	return out
}

// dial connects over tr and fails the test if it cannot.
func (e *limitsEnv) dial(tr *Transport, conf *Config) *Conn {
	e.t.Helper()
	c, err := dialServer(tr, conf)
	if err != nil {
		e.t.Fatalf("Dial from %v: %v", tr.LocalAddr(), err)
	}
	return c
}

// dialServer connects over tr to the server, waiting up to a minute.
func dialServer(tr *Transport, conf *Config) (*Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return tr.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), conf)
}

// downloadSize is what the server sends on each stream.
const downloadSize = 1 << 20

// accepted records a connection the server accepted.
func (e *limitsEnv) accepted(c *Conn) {
	e.mu.Lock()
	e.byClient[c.remote] = c
	e.mu.Unlock()
}

// serverConn is the server's end of the client's connection c.
func (e *limitsEnv) serverConn(c *Conn) *Conn {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.byClient[netip.MustParseAddrPort(c.LocalAddr().String())]
	if s == nil {
		e.t.Fatalf("the server accepted no connection from %v", c.LocalAddr())
	}
	return s
}

// serveDownloads answers every stream of every connection l accepts with
// downloadSize bytes, until l closes; it tells onAccept of each.
func serveDownloads(l *Listener, onAccept func(*Conn)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := l.Accept(context.Background())
		if err != nil {
			return
		}
		onAccept(c)
		wg.Go(func() {
			for {
				st, err := c.AcceptStream(context.Background())
				if err != nil {
					return
				}
				wg.Go(func() {
					_, _ = io.Copy(io.Discard, st)
					_, _ = st.Write(testkit.Payload(downloadSize, 7))
					_ = st.Close()
				})
			}
		})
	}
}

// download fetches one stream's worth from the server over c.
func download(t *testing.T, c *Conn) {
	t.Helper()
	st, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	n, h, err := testkit.ReadAllSum(st)
	if err != nil || n != downloadSize || h != sum(testkit.Payload(downloadSize, 7)) {
		t.Fatalf("download: %d of %d bytes, err %v", n, downloadSize, err)
	}
}

// held is what the Listener holds: handshakes, established connections,
// and the handshakes of one source.
func (l *Listener) held(src netip.Addr) (handshakes, established, fromSrc int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u := l.sources[sourceOf(netip.AddrPortFrom(src, 0))]; u != nil {
		fromSrc = u.handshakes[0] + u.handshakes[1]
	}
	return l.handshakes.len(), l.established.len(), fromSrc
}

// silentConn passes, of each client connection (told apart by the Source
// Connection ID of its long headers), the first Initial and the first
// Initial with a token, and drops every other datagram.
type silentConn struct {
	*memnet.Conn
	mu   sync.Mutex
	sent map[string]uint8 // per connection: 1 first Initial, 2 token
	// withToken is the last Initial with a token passed.
	withToken []byte
}

func (s *silentConn) WriteToUDPAddrPort(p []byte, addr netip.AddrPort) (int, error) {
	if !s.pass(p) {
		return len(p), nil
	}
	return s.Conn.WriteToUDPAddrPort(p, addr)
}

func (s *silentConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if !s.pass(p) {
		return len(p), nil
	}
	return s.Conn.WriteTo(p, addr)
}

func (s *silentConn) pass(p []byte) bool {
	if len(p) == 0 || !wire.IsLongHeader(p[0]) {
		return false
	}
	h, _, err := wire.ParseLongHeader(p)
	if err != nil || h.Type != wire.PacketTypeInitial {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := string(h.SrcConnID.Bytes())
	bit := uint8(1)
	if len(h.Token) > 0 {
		bit = 2
	}
	if s.sent[key]&bit != 0 {
		return false
	}
	s.sent[key] |= bit
	if bit == 2 {
		s.withToken = slices.Clone(p)
	}
	return true
}

// tokenInitial is the last Initial with a token the client sent, or nil.
func (s *silentConn) tokenInitial() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withToken
}

// dialBusy starts a connection attempt from addr, a socket of its own,
// that answers the Retry and then, instead of completing the handshake,
// sends a datagram of junk to the server's connection every period: a
// handshake kept busy, never silent. The junk has a short header that
// routes it to the connection, so that it cannot open another once the
// connection is gone. It stops when the attempt ends.
func (e *limitsEnv) dialBusy(addr netip.AddrPort, every time.Duration) {
	sc := &silentConn{Conn: e.socket(addr), sent: map[string]uint8{}}
	tr := e.client(addr, sc)
	ctx, cancel := context.WithCancel(e.ctx)
	e.dials.Go(func() {
		defer cancel()
		_, err := tr.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), clientTLS(), nil)
		e.mu.Lock()
		e.outcomes[outcome(err)]++
		e.mu.Unlock()
	})
	e.dials.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if junk := junkFor(sc.tokenInitial()); junk != nil {
				_, _ = sc.Conn.WriteToUDPAddrPort(junk, memServerAddr)
			}
		}
	})
}

// junkFor is a short-header datagram of junk to the connection ID an
// Initial was sent to, or nil.
func junkFor(initial []byte) []byte {
	if initial == nil {
		return nil
	}
	h, _, err := wire.ParseLongHeader(initial)
	if err != nil {
		return nil
	}
	b := append([]byte{0x40}, h.DstConnID.Bytes()...)
	return append(b, bytes.Repeat([]byte{0x5a}, 40)...)
}

// wantListenerStats fails the test unless the Listener's counters are
// the ones given.
func wantListenerStats(t *testing.T, l *Listener, refused RefusedStats, evicted EvictedStats, retries uint64) {
	t.Helper()
	st := l.Stats()
	if st.Refused != refused {
		t.Errorf("refused %+v, want %+v", st.Refused, refused)
	}
	if st.Evicted != evicted {
		t.Errorf("evicted %+v, want %+v", st.Evicted, evicted)
	}
	if st.RetriesSent != retries {
		t.Errorf("%d Retry packets sent, want %d", st.RetriesSent, retries)
	}
}

// vanishingConn passes every datagram until vanish is set, then none: a
// client that disappears without a word.
type vanishingConn struct {
	*memnet.Conn
	vanish atomic.Bool
}

func (v *vanishingConn) WriteToUDPAddrPort(p []byte, addr netip.AddrPort) (int, error) {
	if v.vanish.Load() {
		return len(p), nil
	}
	return v.Conn.WriteToUDPAddrPort(p, addr)
}

func (v *vanishingConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	if v.vanish.Load() {
		return len(p), nil
	}
	return v.Conn.WriteTo(p, addr)
}
