package http3

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestPartialHeadersBounded (issue #13): clients that open every stream
// their connection allows, each with a HEADERS frame just short of the
// largest allowed, and never finish them, made the server hold twice
// MaxHeaderBytes per stream for as long as they liked. Now the header
// bytes of a connection stay under MaxConnHeaderBytes, those of the
// server under MaxRequestMemory, the streams that do not fit are
// refused, the rest are reset at ReadHeaderTimeout with every buffer
// freed, and a client on another connection is served throughout.
func TestPartialHeadersBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			maxHeader = 16 << 10
			budget    = 3 << 20
			conns     = 4
			streams   = 100
		)
		s := &Server{Handler: okHandler, MaxHeaderBytes: maxHeader, MaxRequestMemory: budget}
		e := newMemEnv(t, s)
		good := e.transport()
		if got := get(t, good, "/before"); got != "ok" {
			t.Fatalf("before the attack: %q", got)
		}
		peaks := memoryPeaks(s)
		start := time.Now()
		var results []<-chan attackStream
		for range conns {
			results = append(results, partialHeaders(t, e.dialRaw(), streams, 2*maxHeader, 2*maxHeader-1))
		}
		time.Sleep(time.Second)
		if got := get(t, good, "/during"); got != "ok" {
			t.Fatalf("during the attack: %q", got)
		}
		st := s.Stats()
		t.Logf("after 1 s: %+v", st)
		if st.Rejected+st.Overflowed+st.Evicted == 0 {
			t.Errorf("nothing was refused: %+v", st)
		}

		time.Sleep(s.readHeaderTimeout())
		total, perConn := peaks()
		connBound := s.maxConnHeaderBytes()
		t.Logf("peak request memory %d (budget %d), peak of a connection %d (bound %d)", total, budget, perConn, connBound)
		if total > budget || perConn > connBound {
			t.Errorf("peaks %d and %d above the budget %d and the bound %d", total, perConn, budget, connBound)
		}
		timedOut := 0
		for _, ch := range results {
			for _, a := range collect(t, ch, streams) {
				switch ErrCode(a.code) {
				case ErrCodeRequestRejected:
				case ErrCodeRequestIncomplete:
					timedOut++
					if d := a.at.Sub(start); d < s.readHeaderTimeout() || d > s.readHeaderTimeout()+time.Second {
						t.Errorf("a stream timed out after %v", d)
					}
				default:
					t.Errorf("a stream ended with code %#x", a.code)
				}
			}
		}
		st = s.Stats()
		t.Logf("after the header timeout: %+v, %d streams timed out", st, timedOut)
		if timedOut == 0 || st.HeaderTimeouts != uint64(timedOut) {
			t.Errorf("%d streams timed out, the server counts %d", timedOut, st.HeaderTimeouts)
		}
		if st.RequestMemory != 0 || st.ReadingHeaders != 0 || activeStreams(s) != 0 {
			t.Errorf("left held: %+v, %d streams active", st, activeStreams(s))
		}
		if got := get(t, good, "/after"); got != "ok" {
			t.Fatalf("after the attack: %q", got)
		}
	})
}

// TestEvictOldest: with MaxRequestMemory spent by streams whose header
// never comes, each new stream resets the one that waited longest
// (H3_REQUEST_REJECTED) rather than being refused, so that a client on
// another connection, whose header comes at once, is still served.
func TestEvictOldest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const room = 16
		s := &Server{Handler: okHandler, MaxRequestMemory: room * (readBufferCost + waitCost)}
		e := newMemEnv(t, s)
		c := e.dialRaw()
		var ends []<-chan attackStream
		for i := range 2 * room {
			ends = append(ends, streamEnd(rawStream(t, c, []byte{frameHeaders})))
			time.Sleep(10 * time.Millisecond)
			if i == room+2 {
				if got := get(t, e.transport(), "/"); got != "ok" {
					t.Errorf("GET while the budget is spent: %q", got)
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
		st := s.Stats()
		// The GET's stream evicted one and gave its room back when it
		// ended: the next stream took that room, the other newer ones
		// evicted the oldest, the first room streams.
		if st.Evicted != room || st.Rejected != 0 || st.ReadingHeaders != room || st.RequestMemory != room*(readBufferCost+waitCost) {
			t.Errorf("want %d evicted, none rejected, %d reading: %+v", room, room, st)
		}
		for i, ch := range ends[:room] {
			select {
			case a := <-ch:
				if ErrCode(a.code) != ErrCodeRequestRejected {
					t.Errorf("stream %d ended with %#x", i, a.code)
				}
			default:
				t.Errorf("stream %d, among the oldest, is still open", i)
			}
		}
		time.Sleep(s.readHeaderTimeout())
		if st := s.Stats(); st.RequestMemory != 0 || st.HeaderTimeouts != room {
			t.Errorf("after the header timeout: %+v", st)
		}
	})
}

// TestRefuseWhenBodiesHold: a request body's read buffer cannot be taken
// back while its handler runs, so once those leave too little of
// MaxRequestMemory a new request is refused with H3_REQUEST_REJECTED, and
// served again once a handler returned.
func TestRefuseWhenBodiesHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/hold" {
				<-release
			}
			_, _ = io.WriteString(w, "ok")
		})
		// Room for one body and one stream whose header is awaited:
		// with two bodies, not for a third stream.
		s := &Server{Handler: h, MaxRequestMemory: readBufferCost + readBufferCost + waitCost}
		e := newMemEnv(t, s)
		c := e.dialRaw()
		var held []<-chan attackStream
		for range 2 {
			st := rawStream(t, c, requestHeaders("GET", "/hold"))
			_ = st.Close()
			held = append(held, streamEnd(st))
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
		st := rawStream(t, c, requestHeaders("GET", "/"))
		_ = st.Close()
		refused := streamEnd(st)
		time.Sleep(100 * time.Millisecond)
		select {
		case a := <-refused:
			if ErrCode(a.code) != ErrCodeRequestRejected {
				t.Errorf("third request ended with %#x, want H3_REQUEST_REJECTED", a.code)
			}
		default:
			t.Error("third request neither refused nor answered")
		}
		if st := s.Stats(); st.Rejected != 1 || st.Evicted != 0 {
			t.Errorf("stats %+v, want 1 rejected", st)
		}
		close(release)
		for _, ch := range held {
			if a := <-ch; a.code != -1 {
				t.Errorf("held request ended with %#x", a.code)
			}
		}
		if got := get(t, e.transport(), "/"); got != "ok" {
			t.Errorf("after the handlers returned: %q", got)
		}
	})
}

// TestConnHeaderBound: MaxConnHeaderBytes holds for a connection's
// streams together, not for each: a header that fits the per-request
// limit but not what the connection's other incomplete headers left is
// reset with H3_REQUEST_REJECTED, while the same request on another
// connection is served.
func TestConnHeaderBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 64 << 10
		s := &Server{Handler: okHandler, MaxHeaderBytes: 32 << 10, MaxConnHeaderBytes: bound}
		e := newMemEnv(t, s)
		c := e.dialRaw()
		for range 10 {
			streamEnd(rawStream(t, c, []byte{frameHeaders}))
		}
		// 16 more one-byte streams would fit, but not one more with a
		// 30 KiB header.
		big := strings.Repeat("x", 30<<10)
		st := rawStream(t, c, requestHeaders("GET", "/", "x-big", big))
		_ = st.Close()
		end := streamEnd(st)
		time.Sleep(200 * time.Millisecond)
		select {
		case a := <-end:
			if ErrCode(a.code) != ErrCodeRequestRejected {
				t.Errorf("big header ended with %#x", a.code)
			}
		default:
			t.Error("big header neither refused nor answered")
		}
		if got := maxConnCharge(s); got != 10*readBufferCost {
			t.Errorf("connection charge %d after the reset, want %d", got, 10*readBufferCost)
		}
		req, _ := http.NewRequest(http.MethodGet, memURL("/big"), nil)
		req.Header.Set("X-Big", big)
		resp, err := e.transport().RoundTrip(req)
		if err != nil {
			t.Fatalf("big header on another connection: %v", err)
		}
		_ = resp.Body.Close()
		if st := s.Stats(); st.Overflowed != 1 || resp.StatusCode != http.StatusOK {
			t.Errorf("status %d, stats %+v; want 200 and 1 overflow", resp.StatusCode, st)
		}
	})
}

// TestTrailersCharged: trailers are header data too: a trailer section
// that outgrows the connection's bound resets the stream with
// H3_EXCESSIVE_LOAD (the request is under way: it cannot be called
// unprocessed), and the handler's read fails.
func TestTrailersCharged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		readErr := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := io.Copy(io.Discard, r.Body)
			readErr <- err
		})
		s := &Server{Handler: h, MaxHeaderBytes: 32 << 10, MaxConnHeaderBytes: 32 << 10}
		e := newMemEnv(t, s)
		b := requestHeaders("POST", "/")
		b = appendFrameHeader(b, frameData, 3)
		b = append(b, "abc"...)
		b = appendFrameHeader(b, frameHeaders, 60<<10)
		b = append(b, bytes.Repeat([]byte{'t'}, 50<<10)...)
		end := streamEnd(rawStream(t, e.dialRaw(), b))
		time.Sleep(time.Second)
		select {
		case a := <-end:
			if ErrCode(a.code) != ErrCodeExcessiveLoad {
				t.Errorf("stream ended with %#x, want H3_EXCESSIVE_LOAD", a.code)
			}
		default:
			t.Error("the stream was not reset")
		}
		if err := <-readErr; err == nil {
			t.Error("the handler read the body without error")
		}
		if st := s.Stats(); st.Overflowed != 1 || st.RequestMemory != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}
