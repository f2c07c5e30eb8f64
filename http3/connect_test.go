package http3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic"
)

// connectRequest is an extended CONNECT for connect-ip on the memnet
// server, announcing the capsule protocol.
func connectRequest() *http.Request {
	u, _ := url.Parse(memURL("/.well-known/masque/ip/*/*/"))
	return &http.Request{
		Method: http.MethodConnect,
		Proto:  "connect-ip",
		URL:    u,
		Header: http.Header{CapsuleProtocolHeader: {CapsuleProtocolValue}},
	}
}

// connectEnv is a memnet server and client that both enable extended
// CONNECT and HTTP datagrams over an in-memory datagram pair.
type connectEnv struct {
	*memEnv
	tr                 *Transport
	clientDG, serverDG *fakeDatagrams
}

func newConnectEnv(t *testing.T, h http.Handler) *connectEnv {
	cdg, sdg := newFakeDatagramPair()
	s := &Server{Handler: h, EnableExtendedConnect: true, EnableDatagrams: true, datagramSource: sdg.source}
	e := newMemEnv(t, s)
	tr := e.transport()
	tr.EnableDatagrams = true
	tr.datagramSource = cdg.source
	// A tunnel keeps its connection alive through quiet times.
	tr.QUICConfig = &quic.Config{KeepAlivePeriod: 10 * time.Second}
	return &connectEnv{memEnv: e, tr: tr, clientDG: cdg, serverDG: sdg}
}

// echoTunnel accepts an extended CONNECT for connect-ip and, on
// goroutines that outlive the handler, sends back each capsule with its
// type plus one and each datagram with "re:" before it; capsules of type
// 0x99, larger than DefaultMaxCapsuleSize, are skipped. It ends the stream when the
// client does.
func echoTunnel(t *testing.T, taken chan<- *Stream) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect || r.Proto != "connect-ip" || r.URL.Scheme != "https" ||
			r.URL.Host != "localhost" || r.URL.Path != "/.well-known/masque/ip/*/*/" || !CapsuleProtocol(r.Header) {
			t.Errorf("request %s %s %v, header %v", r.Method, r.Proto, r.URL, r.Header)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header().Set(CapsuleProtocolHeader, CapsuleProtocolValue)
		w.WriteHeader(http.StatusOK)
		s := w.(HTTPStreamer).HTTPStream()
		if taken != nil {
			taken <- s
		}
		go func() {
			defer s.Close()
			for {
				typ, p, err := ReadCapsule(s, 0)
				var tooLarge *CapsuleTooLargeError
				if errors.As(err, &tooLarge) && tooLarge.Type == 0x99 {
					continue
				}
				if err != nil {
					// The client's end (io.EOF), or the connection's:
					// the client's checks tell which was wanted.
					return
				}
				if err := WriteCapsule(s, typ+1, p); err != nil {
					t.Errorf("server WriteCapsule: %v", err)
					return
				}
			}
		}()
		go func() {
			for {
				b, err := s.ReceiveDatagram(context.Background())
				if err != nil {
					return
				}
				_ = s.SendDatagram(append([]byte("re:"), b...))
			}
		}()
	})
}

// TestExtendedConnectTunnel: an extended CONNECT opens a stream that
// carries capsules both ways and HTTP datagrams, outlives its handler,
// stays open through minutes of silence, and ends on both sides when
// the client closes it.
func TestExtendedConnectTunnel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		taken := make(chan *Stream, 1)
		e := newConnectEnv(t, echoTunnel(t, taken))
		resp, s, err := e.tr.ExtendedConnect(context.Background(), connectRequest())
		if err != nil {
			t.Fatalf("ExtendedConnect: %v", err)
		}
		if resp.StatusCode != http.StatusOK || s == nil || !CapsuleProtocol(resp.Header) {
			t.Fatalf("response %d %v, stream %v", resp.StatusCode, resp.Header, s)
		}
		if resp.Header.Get("Content-Length") != "" {
			t.Errorf("2xx response to CONNECT with Content-Length %q", resp.Header.Get("Content-Length"))
		}
		server := <-taken

		roundTrip := func(typ CapsuleType, payload []byte) {
			t.Helper()
			if err := WriteCapsule(s, typ, payload); err != nil {
				t.Fatalf("WriteCapsule: %v", err)
			}
			gt, gp, err := ReadCapsule(s, 0)
			if err != nil || gt != typ+1 || !bytes.Equal(gp, payload) {
				t.Fatalf("capsule back: type %#x, %d bytes, %v; want %#x, %d bytes", gt, len(gp), err, typ+1, len(payload))
			}
		}
		roundTrip(CapsuleTypeDatagram, []byte("first"))
		// An unknown capsule larger than the server reads is skipped
		// unbuffered; the stream goes on.
		if err := WriteCapsule(s, 0x99, make([]byte, 100<<10)); err != nil {
			t.Fatal(err)
		}
		roundTrip(0x1234, bytes.Repeat([]byte{7}, 1000))

		for i := range 5 {
			msg := []byte{'d', byte('0' + i)}
			if err := s.SendDatagram(msg); err != nil {
				t.Fatalf("SendDatagram: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			b, err := s.ReceiveDatagram(ctx)
			cancel()
			if err != nil || string(b) != "re:"+string(msg) {
				t.Fatalf("datagram back %q, %v", b, err)
			}
		}

		// Longer than IdleStreamTimeout and ReadHeaderTimeout: the
		// tunnel is quiet, not dead.
		time.Sleep(DefaultIdleStreamTimeout + time.Minute)
		roundTrip(0x41, []byte("after a quiet while"))
		if server.Context().Err() != nil || s.Context().Err() != nil {
			t.Fatalf("a quiet tunnel ended: %v, %v", context.Cause(server.Context()), context.Cause(s.Context()))
		}

		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		<-server.Context().Done()
		if !errors.Is(context.Cause(server.Context()), io.EOF) && !errors.Is(context.Cause(server.Context()), errStreamClosed) {
			t.Errorf("server stream ended with %v", context.Cause(server.Context()))
		}
		if _, err := s.Write([]byte("x")); err == nil {
			t.Errorf("Write after Close succeeded")
		}
		if err := s.SendDatagram([]byte("x")); err == nil {
			t.Errorf("SendDatagram after Close succeeded")
		}
		synctest.Wait()
		if st := e.srv.Stats(); st.DatagramsDropped != 0 || st.IdleReads != 0 || st.RequestMemory != 0 {
			t.Errorf("server stats %+v", st)
		}
	})
}

// TestShutdownWaitsForTunnel: Shutdown lets an open tunnel run on after
// its GOAWAY, and completes once the client closed it.
func TestShutdownWaitsForTunnel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newConnectEnv(t, echoTunnel(t, nil))
		resp, s, err := e.tr.ExtendedConnect(context.Background(), connectRequest())
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("ExtendedConnect: %v %v", resp, err)
		}
		shut := make(chan error, 1)
		go func() { shut <- e.srv.Shutdown(context.Background()) }()
		time.Sleep(time.Second)
		select {
		case err := <-shut:
			t.Fatalf("Shutdown returned %v under an open tunnel", err)
		default:
		}
		if err := WriteCapsule(s, 1, []byte("still")); err != nil {
			t.Fatal(err)
		}
		if typ, p, err := ReadCapsule(s, 0); err != nil || typ != 2 || string(p) != "still" {
			t.Fatalf("capsule after GOAWAY: %#x %q %v", typ, p, err)
		}
		_ = s.Close()
		if err := <-shut; err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
}
