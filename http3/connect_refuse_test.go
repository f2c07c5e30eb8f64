package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestExtendedConnectNotAllowed: against a server without
// EnableExtendedConnect, ExtendedConnect fails with a clear error before
// anything is sent, and a client that sends a :protocol anyway has its
// stream reset with H3_MESSAGE_ERROR (RFC 9220 section 3).
func TestExtendedConnectNotAllowed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		s := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) })}
		e := newMemEnv(t, s)
		tr := e.transport()
		_, st, err := tr.ExtendedConnect(context.Background(), connectRequest())
		if !errors.Is(err, ErrExtendedConnectNotSupported) || st != nil {
			t.Fatalf("ExtendedConnect: %v, stream %v", err, st)
		}
		// The connection stays usable for other requests.
		if got := get(t, tr, "/"); got != "" {
			t.Errorf("GET body %q", got)
		}

		c := e.dialRaw()
		raw := rawStream(t, c, frameBytes(frameHeaders, encodeFields(
			":method", "CONNECT", ":protocol", "connect-ip", ":scheme", "https",
			":authority", "localhost", ":path", "/")))
		if a := <-streamEnd(raw); ErrCode(a.code) != ErrCodeMessageError {
			t.Errorf("a :protocol the server did not allow: stream ended with %#x, want H3_MESSAGE_ERROR", a.code)
		}
		e.srv.EnableExtendedConnect = true
		c = e.dialRaw()
		raw = rawStream(t, c, frameBytes(frameHeaders, encodeFields(
			":method", "CONNECT", ":protocol", "connect ip", ":scheme", "https",
			":authority", "localhost", ":path", "/")))
		if a := <-streamEnd(raw); ErrCode(a.code) != ErrCodeMessageError {
			t.Errorf("a :protocol that is no token: stream ended with %#x, want H3_MESSAGE_ERROR", a.code)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("the handler ran %d times, want once (the GET)", n)
		}
	})
}

// TestExtendedConnectBadRequests: requests that cannot be an extended
// CONNECT fail before any connection is made.
func TestExtendedConnectBadRequests(t *testing.T) {
	tr := &Transport{}
	defer tr.Close()
	for _, mod := range []func(r *http.Request){
		func(r *http.Request) { r.Method = http.MethodGet },
		func(r *http.Request) { r.Proto = "HTTP/1.1" },
		func(r *http.Request) { r.Proto = "" },
		func(r *http.Request) { r.Proto = "connect ip" },
		func(r *http.Request) { r.URL.Scheme = "" },
		func(r *http.Request) { r.Body = io.NopCloser(nil) },
	} {
		req := connectRequest()
		mod(req)
		if _, _, err := tr.ExtendedConnect(context.Background(), req); err == nil {
			t.Errorf("%s %s %v: no error", req.Method, req.Proto, req.URL)
		}
	}
}

// TestExtendedConnectRefusedByHandler: a handler that answers with a
// non-2xx status gives the client the response and its body, and no
// stream; a 2xx handler that does not take the stream ends it when it
// returns.
func TestExtendedConnectRefusedByHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newConnectEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/open-and-leave" {
				w.WriteHeader(http.StatusOK)
				return
			}
			w.WriteHeader(http.StatusForbidden)
			if s := w.(HTTPStreamer).HTTPStream(); s != nil {
				t.Errorf("HTTPStream after 403: %v", s)
			}
			_, _ = io.WriteString(w, "no tunnel for you")
		}))
		resp, s, err := e.tr.ExtendedConnect(context.Background(), connectRequest())
		if err != nil {
			t.Fatalf("ExtendedConnect: %v", err)
		}
		if resp.StatusCode != http.StatusForbidden || s != nil {
			t.Fatalf("response %d, stream %v", resp.StatusCode, s)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil || string(b) != "no tunnel for you" {
			t.Errorf("body %q, %v", b, err)
		}
		_ = resp.Body.Close()

		req := connectRequest()
		req.URL.Path = "/open-and-leave"
		resp, s, err = e.tr.ExtendedConnect(context.Background(), req)
		if err != nil || resp.StatusCode != http.StatusOK || s == nil {
			t.Fatalf("ExtendedConnect: %v, %v", resp, err)
		}
		if cl := resp.Header.Get("Content-Length"); cl != "" {
			t.Errorf("2xx response to CONNECT with Content-Length %q (RFC 9110 section 9.3.6)", cl)
		}
		if n, err := s.Read(make([]byte, 10)); n != 0 || err != io.EOF {
			t.Errorf("Read of a stream the handler left: %d, %v", n, err)
		}
		<-s.Context().Done()
		_ = s.Close()
		synctest.Wait()
		if e.tr.idleCount() != 1 {
			t.Errorf("the connection is not idle after its tunnels ended")
		}
	})
}

// idleCount returns how many of t's connections have no request under
// way.
func (t *Transport) idleCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, cc := range t.conns {
		if cc.idle() {
			n++
		}
	}
	return n
}

// TestExtendedConnectContextBoundsSetup: the context of ExtendedConnect
// bounds the wait for the response; the stream is reset when it ends.
func TestExtendedConnectContextBoundsSetup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		e := newConnectEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-release
		}))
		defer close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, s, err := e.tr.ExtendedConnect(ctx, connectRequest())
		if !errors.Is(err, context.DeadlineExceeded) || s != nil {
			t.Fatalf("ExtendedConnect: %v, %v", s, err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("returned after %v", d)
		}
	})
}
