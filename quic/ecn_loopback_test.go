package quic

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic/internal/udp"
)

// ecnRelay forwards datagrams between one client and a server over real
// loopback sockets, reading the ECN codepoint of each from the IP header
// and sending it on with the codepoint rewrite gives: a router that marks
// CE, or a middlebox that clears the field.
type ecnRelay struct {
	conn    *udp.Conn
	server  netip.AddrPort
	rewrite func(toClient bool, n int, cp ecn.Codepoint) ecn.Codepoint

	mu     sync.Mutex
	client netip.AddrPort
	// seen counts the codepoints that arrived, by direction (0 toward
	// the server, 1 toward the client); n the datagrams.
	seen [2][4]int
	n    [2]int
	done chan struct{}
}

func newECNRelay(t *testing.T, server netip.AddrPort, rewrite func(toClient bool, n int, cp ecn.Codepoint) ecn.Codepoint) *ecnRelay {
	t.Helper()
	c, err := udp.Listen("udp4", "127.0.0.1:0", udp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Capabilities().ECN {
		_ = c.Close()
		t.Skipf("the socket reads no ECN codepoints here (%s)", c.Capabilities())
	}
	r := &ecnRelay{conn: c, server: server, rewrite: rewrite, done: make(chan struct{})}
	go r.loop()
	t.Cleanup(func() {
		_ = c.Close()
		<-r.done
	})
	return r
}

func (r *ecnRelay) addr() string { return r.conn.LocalAddr().String() }

func (r *ecnRelay) loop() {
	defer close(r.done)
	msgs := r.conn.NewReadBatch(16)
	out := make([]udp.Message, 0, len(msgs))
	for {
		n, err := r.conn.ReadBatch(msgs)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		out = out[:0]
		r.mu.Lock()
		for i := range n {
			m := &msgs[i]
			dir := 0
			to := r.server
			if m.Addr == r.server {
				dir, to = 1, r.client
			} else {
				r.client = m.Addr
			}
			r.seen[dir][m.ECN&3]++
			cp := r.rewrite(dir == 1, r.n[dir], m.ECN)
			r.n[dir]++
			out = append(out, udp.Message{Data: m.Data, Addr: to, ECN: cp})
		}
		r.mu.Unlock()
		_, _ = r.conn.WriteBatch(out)
	}
}

func (r *ecnRelay) counts() (seen [2][4]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seen
}

// ecnDownload has a client fetch size bytes through a relay and returns
// both ends' statistics once the client read everything.
func ecnDownload(t *testing.T, size int, clientConf *Config, rewrite func(toClient bool, n int, cp ecn.Codepoint) ecn.Codepoint) (cli, srv ConnectionStats, relay *ecnRelay) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	relay = newECNRelay(t, netip.MustParseAddrPort(l.Addr().String()), rewrite)
	srvStats := make(chan ConnectionStats, 1)
	go func() {
		c, err := l.Accept(ctx)
		if err != nil {
			close(srvStats)
			return
		}
		s, err := c.OpenUniStream()
		if err == nil {
			_, _ = s.Write(testkit.Payload(size, 3))
			_ = s.Close()
		}
		<-c.Context().Done()
		srvStats <- c.Stats()
	}()
	c, err := DialAddr(ctx, relay.addr(), clientTLS(), clientConf)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, s)
	if err != nil || n != int64(size) {
		t.Fatalf("read %d bytes (%v), want %d", n, err, size)
	}
	cli = c.Stats()
	_ = c.CloseWithError(0, "")
	srv, ok := <-srvStats
	if !ok {
		t.Fatal("server accepted no connection")
	}
	return cli, srv, relay
}

func keepECN(_ bool, _ int, cp ecn.Codepoint) ecn.Codepoint { return cp }

// Over real sockets the marks go out, arrive, validate, and a router's CE
// marks slow the sender; a middlebox that clears them turns marking off.
func TestLoopbackECN(t *testing.T) {
	testkit.CheckGoroutines(t)
	t.Run("marked", func(t *testing.T) {
		// Every 16th ECT datagram toward the client arrives CE.
		ceEvery := func(toClient bool, n int, cp ecn.Codepoint) ecn.Codepoint {
			if toClient && cp == ecn.ECT0 && n%16 == 15 {
				return ecn.CE
			}
			return cp
		}
		cli, srv, relay := ecnDownload(t, 1<<20, nil, ceEvery)
		seen := relay.counts()
		t.Logf("relay saw (Not-ECT, ECT(1), ECT(0), CE) toward server %v, toward client %v", seen[0], seen[1])
		t.Logf("client ECN %+v; server ECN %+v", cli.ECN, srv.ECN)
		if seen[0][ecn.ECT0] == 0 || seen[1][ecn.ECT0] == 0 {
			t.Errorf("no ECT(0) datagram crossed the relay: %v", seen)
		}
		if cli.ECN.State != "capable" || srv.ECN.State != "capable" {
			t.Errorf("ECN states %q and %q, want capable", cli.ECN.State, srv.ECN.State)
		}
		if cli.ECN.CEReceived == 0 || srv.ECN.CEReported == 0 || srv.ECN.CongestionSignals == 0 {
			t.Errorf("CE marks not reported or not acted on: client %+v, server %+v", cli.ECN, srv.ECN)
		}
	})
	t.Run("bleached", func(t *testing.T) {
		clear := func(toClient bool, _ int, cp ecn.Codepoint) ecn.Codepoint {
			if toClient {
				return ecn.NotECT
			}
			return cp
		}
		cli, srv, _ := ecnDownload(t, 256<<10, nil, clear)
		t.Logf("client ECN %+v; server ECN %+v", cli.ECN, srv.ECN)
		if srv.ECN.State != "failed" || srv.ECN.PacketsMarked > 10 {
			t.Errorf("server ECN %+v over a bleaching path, want failed after the testing period", srv.ECN)
		}
		// The client's few marked packets may not be acknowledged yet
		// (it sends mostly ACKs, acknowledged now and then).
		if cli.ECN.State == "failed" || cli.ECN.State == "disabled" {
			t.Errorf("client ECN %+v over a clean path", cli.ECN)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		cli, srv, relay := ecnDownload(t, 256<<10, &Config{DisableECN: true}, keepECN)
		seen := relay.counts()
		if seen[0][ecn.ECT0] != 0 || cli.ECN.State != "disabled" || cli.ECN.PacketsMarked != 0 {
			t.Errorf("client with DisableECN: %+v, relay saw %v", cli.ECN, seen[0])
		}
		// The server marks, but the client reports nothing.
		if srv.ECN.State != "failed" {
			t.Errorf("server ECN %+v toward a client without ECN, want failed", srv.ECN)
		}
	})
}
