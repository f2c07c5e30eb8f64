package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
	"github.com/satquic/satquic/quic"
)

// The tests that use memEnv run a Server and its clients over
// netsim/memnet inside a testing/synctest bubble: time is virtual, so
// that timeouts of seconds take none, and the bubble fails the test if a
// goroutine is left blocked at its end.

var (
	memClientAddr = netip.MustParseAddrPort("10.0.0.1:4433")
	memServerAddr = netip.MustParseAddrPort("10.0.0.2:443")
)

// memLink is a 100 Mbit/s link with 20 ms of delay each way.
var memLink = netsim.LinkConfig{RateBps: 100e6, Delay: 20 * time.Millisecond}

// memEnv is a Server and a client QUIC Transport joined by a memnet path.
type memEnv struct {
	t      *testing.T
	srv    *Server
	client *quic.Transport
}

// memPath joins the server's and the client's memnet sockets by a path of
// link each way. The network closes when the test ends, after whatever the
// caller's own cleanups close (they run first, registered later).
func memPath(t *testing.T, link netsim.LinkConfig) (server, client net.PacketConn) {
	t.Helper()
	n := memnet.New(memnet.Config{Seed: 1})
	t.Cleanup(func() { _ = n.Close() })
	if _, err := n.AddPath(memClientAddr.Addr(), memServerAddr.Addr(), link, link); err != nil {
		t.Fatal(err)
	}
	server, err := n.Listen(memServerAddr)
	if err != nil {
		t.Fatal(err)
	}
	client, err = n.Listen(memClientAddr)
	if err != nil {
		t.Fatal(err)
	}
	return server, client
}

// newMemEnv serves srv, whose TLSConfig it sets, until the test ends.
// It must run inside the bubble.
func newMemEnv(t *testing.T, srv *Server) *memEnv {
	t.Helper()
	spc, cpc := memPath(t, memLink)
	srv.TLSConfig = serverTLS()
	l, err := srv.Listen(spc)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	e := &memEnv{t: t, srv: srv, client: &quic.Transport{Conn: cpc}}
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-served; err != ErrServerClosed {
			t.Errorf("Serve returned %v", err)
		}
		_ = e.client.Close()
	})
	return e
}

// transport returns an HTTP/3 Transport whose connections reach the
// server over memnet, closed when the test ends.
func (e *memEnv) transport() *Transport {
	tr := &Transport{
		TLSClientConfig: clientTLS(),
		Dial: func(ctx context.Context, _ string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error) {
			return e.client.Dial(ctx, net.UDPAddrFromAddrPort(memServerAddr), tlsConf, conf)
		},
	}
	e.t.Cleanup(func() { _ = tr.Close() })
	return tr
}

// dialRaw opens an h3 connection on which the test writes frames
// itself, as a hostile client would.
func (e *memEnv) dialRaw() *quic.Conn {
	e.t.Helper()
	tlsConf := clientTLS()
	tlsConf.ServerName = "localhost"
	c, err := e.client.Dial(context.Background(), net.UDPAddrFromAddrPort(memServerAddr), tlsConf, nil)
	if err != nil {
		e.t.Fatalf("Dial: %v", err)
	}
	e.t.Cleanup(func() { _ = c.CloseWithError(0, "") })
	return c
}

// memURL is the URL of path on the memnet server.
func memURL(path string) string { return "https://localhost" + path }

// get fetches path with tr and returns the body, or fails the test.
func get(t *testing.T, tr *Transport, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, memURL(path), nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %q, %v", path, resp.StatusCode, b, err)
	}
	return string(b)
}

// resetCode returns the HTTP/3 code of a stream error the peer sent,
// or -1 for any other error.
func resetCode(err error) int64 {
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote {
		return int64(se.ErrorCode)
	}
	return -1
}

// okHandler answers "ok".
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, "ok")
})
