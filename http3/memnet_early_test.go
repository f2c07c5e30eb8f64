package http3

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic"
)

// 0-RTT end to end over memnet in virtual time: a 600 ms round trip at
// 50 Mbit/s, as a GEO satellite path.

var geoLink = netsim.LinkConfig{RateBps: 50e6, Delay: 300 * time.Millisecond}

const geoRTT = 600 * time.Millisecond

// earlyEnv is a Server on an early Listener that allows 0-RTT, and a
// Transport whose client keeps session tickets.
type earlyEnv struct {
	t      *testing.T
	srv    *Server
	server *quic.Transport
	client *quic.Transport
	tr     *Transport
	serves sync.WaitGroup

	mu   sync.Mutex
	seen []seenRequest // the requests the handler ran
}

// seenRequest is what the handler saw of a request.
type seenRequest struct {
	method    string
	handshake bool // Request.TLS.HandshakeComplete
}

func newEarlyEnv(t *testing.T) *earlyEnv { return newEarlyEnvServing(t, nil) }

// newEarlyEnvServing is newEarlyEnv whose Listener serve serves, if set,
// instead of the Server.
func newEarlyEnvServing(t *testing.T, serve func(*quic.Listener)) *earlyEnv {
	t.Helper()
	spc, cpc := memPath(t, geoLink)
	e := &earlyEnv{t: t, server: &quic.Transport{Conn: spc}, client: &quic.Transport{Conn: cpc}}
	e.srv = &Server{Handler: http.HandlerFunc(e.handle), QUICConfig: &quic.Config{Allow0RTT: true}}
	if serve == nil {
		e.listen()
	} else {
		l, err := e.server.ListenEarly(ConfigureTLS(serverTLS()), e.srv.QUICConfig)
		if err != nil {
			t.Fatal(err)
		}
		e.serves.Go(func() { serve(l) })
	}
	tlsConf := clientTLS()
	tlsConf.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	e.tr = &Transport{
		TLSClientConfig: tlsConf,
		// As the default dial: early when the ticket allows 0-RTT.
		Dial: func(ctx context.Context, _ string, tc *tls.Config, conf *quic.Config) (*quic.Conn, error) {
			to := net.UDPAddrFromAddrPort(memServerAddr)
			if earlyDataTicket(tc) {
				return e.client.DialEarly(ctx, to, tc, conf)
			}
			return e.client.Dial(ctx, to, tc, conf)
		},
	}
	t.Cleanup(func() {
		_ = e.tr.Close()
		_ = e.srv.Close()
		_ = e.client.Close()
		_ = e.server.Close()
		e.serves.Wait()
	})
	return e
}

// listen serves a new early Listener, whose session ticket keys are its
// own: tickets of an earlier one no longer resume.
func (e *earlyEnv) listen() *quic.Listener {
	e.t.Helper()
	l, err := e.server.ListenEarly(ConfigureTLS(serverTLS()), e.srv.QUICConfig)
	if err != nil {
		e.t.Fatal(err)
	}
	e.serves.Go(func() { _ = e.srv.Serve(l) })
	return l
}

// handle answers with the number of bytes the path's n asks for, after
// reading the request body.
func (e *earlyEnv) handle(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	e.mu.Lock()
	e.seen = append(e.seen, seenRequest{r.Method, r.TLS != nil && r.TLS.HandshakeComplete})
	e.mu.Unlock()
	var n int
	_, _ = fmt.Sscanf(r.URL.Query().Get("n"), "%d", &n)
	_, _ = w.Write(bytes.Repeat([]byte{'x'}, n))
}

// lastSeen is the last request the handler ran.
func (e *earlyEnv) lastSeen() seenRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.seen) == 0 {
		e.t.Fatal("the handler ran no request")
	}
	return e.seen[len(e.seen)-1]
}

// fetch runs one request for n bytes on a new connection, and returns the
// time from the start of that connection to the last byte of the body.
func (e *earlyEnv) fetch(method string, n int) time.Duration {
	e.t.Helper()
	e.tr.CloseIdleConnections()
	time.Sleep(time.Second) // the old connection's close is over
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var body io.Reader
	if method == http.MethodPost {
		body = bytes.NewReader([]byte("form=1"))
	}
	req, _ := http.NewRequestWithContext(ctx, method, memURL(fmt.Sprintf("/?n=%d", n)), body)
	start := time.Now()
	resp, err := e.tr.RoundTrip(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	got, err := io.ReadAll(resp.Body)
	elapsed := time.Since(start)
	_ = resp.Body.Close()
	if err != nil || len(got) != n || resp.StatusCode != http.StatusOK {
		e.t.Fatalf("%s: %d, %d of %d bytes, %v", method, resp.StatusCode, len(got), n, err)
	}
	return elapsed
}

// hasTicket reports whether the client's cache holds a ticket that allows
// 0-RTT, waiting a little for it: it comes after the handshake.
func (e *earlyEnv) hasTicket() bool {
	tc := e.tr.TLSClientConfig.Clone()
	tc.ServerName = "localhost"
	for range 50 {
		if earlyDataTicket(tc) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// TestResumedRequestOneRTT: over a 600 ms round trip, a new connection
// costs two round trips before the response's first byte; a resumed
// GET goes in 0-RTT and its response comes back in 0.5-RTT, one round
// trip from the start of the connection (and the serialization of the
// server's flight). The handler sees the request before the handshake
// completed.
func TestResumedRequestOneRTT(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEarlyEnv(t)
		const size = 2000
		cold := e.fetch(http.MethodGet, size)
		if cold < 2*geoRTT {
			t.Errorf("first connection's GET took %v, less than two round trips", cold)
		}
		if !e.hasTicket() {
			t.Fatal("no session ticket that allows 0-RTT")
		}
		resumed := e.fetch(http.MethodGet, size)
		if resumed < geoRTT || resumed > geoRTT+20*time.Millisecond {
			t.Errorf("resumed GET took %v, want one round trip (%v) and the serialization of a few datagrams", resumed, geoRTT)
		}
		if s := e.lastSeen(); s.handshake {
			t.Error("the handler of a 0-RTT GET saw the handshake complete")
		}
		t.Logf("GET of %d bytes: %v on a new connection, %v resumed with 0-RTT", size, cold, resumed)
	})
}

// TestUnsafeRequestWaitsForHandshake: a POST is never sent in 0-RTT: on a
// resumed connection it leaves once the handshake completed, and the
// server runs it after its own handshake completed; a GET after it on the
// same connection is not delayed.
func TestUnsafeRequestWaitsForHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEarlyEnv(t)
		e.fetch(http.MethodGet, 10)
		if !e.hasTicket() {
			t.Fatal("no session ticket that allows 0-RTT")
		}
		post := e.fetch(http.MethodPost, 10)
		if post < 2*geoRTT || post > 2*geoRTT+20*time.Millisecond {
			t.Errorf("resumed POST took %v, want two round trips (%v) and the serialization of a few datagrams", post, 2*geoRTT)
		}
		if s := e.lastSeen(); s.method != http.MethodPost || !s.handshake {
			t.Errorf("handler saw %+v, want a POST after the handshake", s)
		}
	})
}

// TestEarlyUnsafeRequestHeldByServer: a client that sends a POST in
// 0-RTT itself (not through Transport) gets it served only once the
// handshake completed: a replay of its flight would never be.
func TestEarlyUnsafeRequestHeldByServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEarlyEnv(t)
		e.fetch(http.MethodGet, 10)
		if !e.hasTicket() {
			t.Fatal("no session ticket that allows 0-RTT")
		}
		tc := e.tr.TLSClientConfig.Clone()
		tc.ServerName = "localhost"
		tc.NextProtos = []string{NextProtoH3}
		qc, err := e.client.DialEarly(context.Background(), net.UDPAddrFromAddrPort(memServerAddr), tc, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer qc.CloseWithError(0, "")
		st, err := qc.OpenStream()
		if err != nil {
			t.Fatalf("OpenStream in 0-RTT: %v", err)
		}
		req, _ := http.NewRequest(http.MethodPost, memURL("/?n=5"), http.NoBody)
		hdr, _, err := encodeRequest(nil, req, false)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = st.Write(hdr)
		_ = st.Close()
		_, _ = io.ReadAll(st)
		if !qc.ConnectionState().Used0RTT {
			t.Fatal("the POST did not go in 0-RTT")
		}
		if s := e.lastSeen(); s.method != http.MethodPost || !s.handshake {
			t.Errorf("handler saw %+v, want the POST after the handshake", s)
		}
	})
}

// TestRejected0RTTRequest: a server that cannot open the client's ticket
// (a new Listener, with other ticket keys) rejects the 0-RTT data; the
// GET sent in it is sent again after the handshake and answered.
func TestRejected0RTTRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEarlyEnv(t)
		e.fetch(http.MethodGet, 10)
		if !e.hasTicket() {
			t.Fatal("no session ticket that allows 0-RTT")
		}
		e.srv.mu.Lock()
		var old *quic.Listener
		for l := range e.srv.listeners {
			old = l
		}
		e.srv.mu.Unlock()
		_ = old.Close()
		e.listen()
		d := e.fetch(http.MethodGet, 3000)
		if d < 2*geoRTT {
			t.Errorf("GET after rejected 0-RTT took %v, less than two round trips", d)
		}
		if s := e.lastSeen(); !s.handshake {
			t.Error("the handler of a rejected 0-RTT GET ran before the handshake")
		}
	})
}

// TestUnsafeRequestNotSentEarly: the Transport sends a POST on a resumed
// connection only once the handshake completed, a round trip after the
// server accepted the connection, and a GET at once, in 0-RTT. The
// server here is a bare one that answers every request stream with an
// empty 200 and notes when the stream arrived.
func TestUnsafeRequestNotSentEarly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		arrivals := make(chan time.Duration, 8)
		e := newEarlyEnvServing(t, func(l *quic.Listener) { serveBare(l, arrivals) })
		e.bareFetch(http.MethodGet)
		<-arrivals
		if !e.hasTicket() {
			t.Fatal("no session ticket that allows 0-RTT")
		}
		for _, tc := range []struct {
			method string
			want   time.Duration
		}{{http.MethodGet, 0}, {http.MethodPost, geoRTT}, {http.MethodPut, geoRTT}, {http.MethodHead, 0}} {
			e.bareFetch(tc.method)
			if got := <-arrivals; got < tc.want || got > tc.want+20*time.Millisecond {
				t.Errorf("%s on a resumed connection arrived %v after the server accepted it, want %v", tc.method, got, tc.want)
			}
		}
	})
}

// bareFetch sends a request without body on a new connection and reads
// its response.
func (e *earlyEnv) bareFetch(method string) {
	e.t.Helper()
	e.tr.CloseIdleConnections()
	time.Sleep(time.Second)
	req, _ := http.NewRequest(method, memURL("/"), nil)
	resp, err := e.tr.RoundTrip(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
}

// serveBare answers every request stream of l's connections with an
// empty 200 response, and sends on arrivals how long after the
// connection was accepted each stream arrived.
func serveBare(l *quic.Listener, arrivals chan<- time.Duration) {
	for {
		qc, err := l.Accept(context.Background())
		if err != nil {
			return
		}
		accepted := time.Now()
		go func() {
			for {
				st, err := qc.AcceptStream(context.Background())
				if err != nil {
					return
				}
				arrivals <- time.Since(accepted)
				if _, err := readRequestFrame(bufio.NewReader(st), 1<<20); err != nil {
					st.CancelWrite(0)
					continue
				}
				fw := getFieldWriter()
				fw.field(":status", "200")
				fw.field("content-length", "0")
				_, _ = st.Write(fw.frame(nil))
				putFieldWriter(fw)
				_ = st.Close()
			}
		}()
	}
}
