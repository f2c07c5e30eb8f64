package http3

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic"
)

func TestParseHTTPDatagram(t *testing.T) {
	for _, tc := range []struct {
		in      []byte
		qsid    uint64
		payload []byte
		bad     bool
	}{
		{in: []byte{0x00}, qsid: 0, payload: []byte{}},
		{in: []byte{0x01, 'a', 'b'}, qsid: 1, payload: []byte("ab")},
		{in: []byte{0x7f, 0xff, 9}, qsid: 1<<14 - 1, payload: []byte{9}},
		{in: appendVarint(nil, maxQuarterStreamID), qsid: maxQuarterStreamID, payload: []byte{}},
		{in: appendVarint(nil, maxQuarterStreamID+1), bad: true},
		{in: appendVarint(nil, maxVarint), bad: true},
		{in: nil, bad: true},
		{in: []byte{0x40}, bad: true},
		{in: []byte{0x80, 0, 0}, bad: true},
	} {
		qsid, p, err := parseHTTPDatagram(tc.in)
		if tc.bad {
			if e, ok := asH3(err); !ok || e.Code != ErrCodeDatagramError || !e.Connection {
				t.Errorf("%x: error %v, want H3_DATAGRAM_ERROR", tc.in, err)
			}
			continue
		}
		if err != nil || qsid != tc.qsid || !bytes.Equal(p, tc.payload) {
			t.Errorf("%x: %d %x %v", tc.in, qsid, p, err)
		}
	}
	// The Quarter Stream ID is the stream ID divided by four.
	b := appendHTTPDatagram(nil, 4*77, []byte("x"))
	if qsid, p, err := parseHTTPDatagram(b); qsid != 77 || string(p) != "x" || err != nil {
		t.Errorf("round trip: %d %q %v", qsid, p, err)
	}
}

// FuzzParseHTTPDatagram: any input gives a Quarter Stream ID and a
// payload that encode back to it, or H3_DATAGRAM_ERROR; never a panic.
func FuzzParseHTTPDatagram(f *testing.F) {
	f.Add([]byte{0x00})
	f.Add([]byte{0x41, 0x00, 'p'})
	f.Add(appendVarint(nil, maxQuarterStreamID+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		qsid, p, err := parseHTTPDatagram(b)
		if err != nil {
			if e, ok := asH3(err); !ok || e.Code != ErrCodeDatagramError {
				t.Fatalf("error %v", err)
			}
			return
		}
		again := append(appendVarint(nil, qsid), p...)
		q2, p2, err := parseHTTPDatagram(again)
		if err != nil || q2 != qsid || !bytes.Equal(p, p2) {
			t.Fatalf("round trip of %x: %d %x %v", b, q2, p2, err)
		}
	})
}

// openTunnel opens an echo tunnel in e and returns the client's stream.
func openTunnel(t *testing.T, e *connectEnv) *Stream {
	t.Helper()
	resp, s, err := e.tr.ExtendedConnect(context.Background(), connectRequest())
	if err != nil || resp.StatusCode != http.StatusOK || s == nil {
		t.Fatalf("ExtendedConnect: %v %v", resp, err)
	}
	return s
}

// openTunnelPair opens a tunnel in a new connectEnv and returns both its
// ends, the client's and the server handler's, closed when the test
// ends; e is the environment they run in.
func openTunnelPair(t *testing.T) (e *connectEnv, client, server *Stream) {
	t.Helper()
	taken := make(chan *Stream, 1)
	e = newConnectEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		taken <- w.(HTTPStreamer).HTTPStream()
	}))
	client = openTunnel(t, e)
	server = <-taken
	t.Cleanup(func() {
		_ = server.Close()
		_ = client.Close()
	})
	return e, client, server
}

// TestHTTPDatagramDrops: datagrams for no open stream, and those beyond
// a stream's queue, are dropped and counted; the rest arrive.
func TestHTTPDatagramDrops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, s, server := openTunnelPair(t)
		for i := range datagramQueueLen + 8 {
			if err := s.SendDatagram([]byte{byte(i)}); err != nil {
				t.Fatal(err)
			}
		}
		// Streams 4 and 8 were never opened.
		_ = e.clientDG.SendDatagram(appendHTTPDatagram(nil, 4, []byte("?")))
		_ = e.serverDG.SendDatagram(appendHTTPDatagram(nil, 8, []byte("?")))
		synctest.Wait()
		st := e.srv.Stats()
		if st.DatagramsDropped != 8 || st.DatagramsUnknown != 1 {
			t.Errorf("server dropped %d for a full queue and %d for no stream, want 8 and 1", st.DatagramsDropped, st.DatagramsUnknown)
		}
		if unknown, full := e.tr.DroppedDatagrams(); unknown != 1 || full != 0 {
			t.Errorf("client dropped %d, %d; want 1, 0", unknown, full)
		}
		for i := range datagramQueueLen {
			b, err := server.ReceiveDatagram(context.Background())
			if err != nil || len(b) != 1 || b[0] != byte(i) {
				t.Fatalf("datagram %d: %x %v", i, b, err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if b, err := server.ReceiveDatagram(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("a datagram beyond the queue arrived: %x, %v", b, err)
		}
	})
}

// TestHTTPDatagramMalformed: a datagram whose Quarter Stream ID no stream
// can have closes the connection with H3_DATAGRAM_ERROR (RFC 9297
// section 2.1); the client's stream learns it.
func TestHTTPDatagramMalformed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newConnectEnv(t, echoTunnel(t, nil))
		s := openTunnel(t, e)
		_ = e.clientDG.SendDatagram(appendVarint(nil, maxQuarterStreamID+1))
		<-s.Context().Done()
		var ae *Error
		if err := context.Cause(s.Context()); !errors.As(err, &ae) || ae.Code != ErrCodeDatagramError || !ae.Remote {
			t.Errorf("stream ended with %v, want the server's H3_DATAGRAM_ERROR", err)
		}
	})
}

// TestH3DatagramSettingNeedsQUICDatagrams: an endpoint that uses HTTP
// datagrams and receives SETTINGS_H3_DATAGRAM on a connection without
// QUIC DATAGRAM frames closes it with H3_SETTINGS_ERROR (RFC 9297 section
// 2.1.1); one that does not use them ignores the setting.
func TestH3DatagramSettingNeedsQUICDatagrams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, sdg := newFakeDatagramPair()
		e := newMemEnv(t, &Server{Handler: echoTunnel(t, nil), EnableExtendedConnect: true, EnableDatagrams: true, datagramSource: sdg.source})
		plain := e.transport()
		_, s, err := plain.ExtendedConnect(context.Background(), connectRequest())
		if err != nil {
			t.Fatalf("a client without HTTP datagrams: %v", err)
		}
		_ = s.Close()

		tr := e.transport()
		tr.EnableDatagrams = true
		tr.datagramSource = func(*quic.Conn) (datagramConn, func() bool) { return nil, func() bool { return false } }
		_, _, err = tr.ExtendedConnect(context.Background(), connectRequest())
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != ErrCodeSettingsError || ae.Remote {
			t.Errorf("ExtendedConnect: %v, want this client's H3_SETTINGS_ERROR", err)
		}
	})
}

// TestHTTPDatagramsNotNegotiated: without HTTP datagrams on one side,
// the stream works and its datagram calls fail with clear errors.
func TestHTTPDatagramsNotNegotiated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cdg, _ := newFakeDatagramPair()
		// The server enables HTTP datagrams and its QUIC connections
		// negotiated DATAGRAM frames, but its quic package cannot send
		// them: it does not advertise HTTP datagrams.
		noDatagrams := func(*quic.Conn) (datagramConn, func() bool) { return nil, func() bool { return true } }
		e := newMemEnv(t, &Server{Handler: echoTunnel(t, nil), EnableExtendedConnect: true, EnableDatagrams: true, datagramSource: noDatagrams})
		tr := e.transport()
		tr.EnableDatagrams = true
		tr.datagramSource = cdg.source
		resp, s, err := tr.ExtendedConnect(context.Background(), connectRequest())
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("ExtendedConnect: %v %v", resp, err)
		}
		if err := s.SendDatagram([]byte("x")); !errors.Is(err, ErrPeerDatagramsDisabled) {
			t.Errorf("SendDatagram to a server without them: %v", err)
		}
		_ = s.Close()

		plain := e.transport()
		_, s, err = plain.ExtendedConnect(context.Background(), connectRequest())
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := s.SendDatagram([]byte("x")); !errors.Is(err, ErrDatagramsDisabled) {
			t.Errorf("SendDatagram without EnableDatagrams: %v", err)
		}
		if _, err := s.ReceiveDatagram(context.Background()); !errors.Is(err, ErrDatagramsDisabled) {
			t.Errorf("ReceiveDatagram without EnableDatagrams: %v", err)
		}
	})
}

// BenchmarkHTTPDatagramDispatch measures the demultiplexer's cost per
// datagram of 1200 bytes, to a stream among 100 that a reader drains
// (what the reader does not take in time is dropped, which costs the
// same).
func BenchmarkHTTPDatagramDispatch(b *testing.B) {
	m := newDatagramMux(nil, new(datagramCounters))
	var q chan []byte
	for i := range 100 {
		q = m.register(quic.StreamID(4 * i))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range q {
		}
	}()
	d := appendHTTPDatagram(nil, 4*99, make([]byte, 1200))
	b.SetBytes(int64(len(d)))
	b.ReportAllocs()
	for b.Loop() {
		if err := m.dispatch(d); err != nil {
			b.Fatal(err)
		}
	}
	close(q)
	<-done
}

// TestHTTPDatagramConnectionBudget: a client that opens several tunnels
// and sends datagrams nobody reads makes the server hold at most
// maxQueuedDatagramBytes of them; what a handler reads makes room again.
func TestHTTPDatagramConnectionBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		taken := make(chan *Stream, 8)
		e := newConnectEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			taken <- w.(HTTPStreamer).HTTPStream()
		}))
		const tunnels, size = 6, 1200
		payload := make([]byte, size)
		var clients, servers []*Stream
		for range tunnels {
			s := openTunnel(t, e)
			defer s.Close()
			server := <-taken
			defer server.Close()
			clients, servers = append(clients, s), append(servers, server)
			for range datagramQueueLen {
				if err := s.SendDatagram(payload); err != nil {
					t.Fatal(err)
				}
				// Let the demultiplexer keep up with the in-memory pair.
				synctest.Wait()
			}
		}
		// Each is held whole: its 1-byte Quarter Stream ID counts.
		held := maxQueuedDatagramBytes / (size + 1)
		dropped := e.srv.Stats().DatagramsDropped
		if want := uint64(tunnels*datagramQueueLen - held); dropped != want {
			t.Errorf("server dropped %d datagrams, want %d (it holds at most %d bytes)", dropped, want, maxQueuedDatagramBytes)
		}
		// The last tunnel's queue is empty, yet the connection's budget
		// is spent: one more is dropped, until a handler reads one.
		send := func() {
			t.Helper()
			if err := clients[tunnels-1].SendDatagram(payload); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		send()
		if got := e.srv.Stats().DatagramsDropped; got != dropped+1 {
			t.Errorf("with the budget spent, %d dropped, want 1", got-dropped)
		}
		if _, err := servers[0].ReceiveDatagram(context.Background()); err != nil {
			t.Fatal(err)
		}
		send()
		if got := e.srv.Stats().DatagramsDropped; got != dropped+1 {
			t.Errorf("after a read, %d dropped, want the one before", got-dropped)
		}
		if b, err := servers[tunnels-1].ReceiveDatagram(context.Background()); err != nil || len(b) != size {
			t.Errorf("the datagram after the read: %d bytes, %v", len(b), err)
		}
	})
}

// TestHTTPDatagramsBatch: SendDatagrams sends a batch in order, and the
// peer's TryReceiveDatagram takes what has arrived without waiting, then
// reports that nothing is left.
func TestHTTPDatagramsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, server := openTunnelPair(t)
		batch := [][]byte{[]byte("a"), []byte("bb"), {}, []byte("dddd")}
		if n, err := s.SendDatagrams(batch); n != len(batch) || err != nil {
			t.Fatalf("SendDatagrams: %d, %v", n, err)
		}
		synctest.Wait()
		first, err := server.ReceiveDatagram(context.Background())
		if err != nil || string(first) != "a" {
			t.Fatalf("first: %q, %v", first, err)
		}
		for _, want := range batch[1:] {
			b, ok := server.TryReceiveDatagram()
			if !ok || string(b) != string(want) {
				t.Fatalf("TryReceiveDatagram: %q, %v; want %q", b, ok, want)
			}
		}
		if b, ok := server.TryReceiveDatagram(); ok {
			t.Fatalf("TryReceiveDatagram with nothing left: %q", b)
		}
		if n, err := s.SendDatagramsWait(context.Background(), batch[:2]); n != 2 || err != nil {
			t.Fatalf("SendDatagramsWait: %d, %v", n, err)
		}
		synctest.Wait()
		for _, want := range batch[:2] {
			if b, ok := server.TryReceiveDatagram(); !ok || string(b) != string(want) {
				t.Fatalf("after SendDatagramsWait: %q, %v; want %q", b, ok, want)
			}
		}
	})
}
