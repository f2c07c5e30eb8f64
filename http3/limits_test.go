package http3

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic"
)

// attackStream is how one hostile request stream ended: the code of the
// server's reset (-1 for none) and when it came.
type attackStream struct {
	code int64
	at   time.Time
}

// partialHeaders opens n request streams on c, each sending a HEADERS
// frame that announces size bytes of payload and sending sent of them,
// then waiting for the server to reset the stream. Each stream's end
// arrives on the channel.
func partialHeaders(t *testing.T, c *quic.Conn, n int, size, sent uint64) <-chan attackStream {
	t.Helper()
	out := make(chan attackStream, n)
	for range n {
		st, err := c.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatalf("OpenStreamSync: %v", err)
		}
		go func() {
			b := appendFrameHeader(nil, frameHeaders, size)
			b = append(b, bytes.Repeat([]byte{'a'}, int(sent))...)
			_, _ = st.Write(b)
			_, err := st.Read(make([]byte, 1))
			out <- attackStream{code: resetCode(err), at: time.Now()}
		}()
	}
	return out
}

// collect takes n results from ch, which must all be there.
func collect(t *testing.T, ch <-chan attackStream, n int) []attackStream {
	t.Helper()
	var got []attackStream
	for range n {
		select {
		case a := <-ch:
			got = append(got, a)
		default:
			t.Fatalf("%d of %d hostile streams were not reset", n-len(got), n)
		}
	}
	return got
}

// memoryPeaks samples what a Server's limits count every 10 ms of
// virtual time until stop is called: the largest total of request data
// and the largest header charge of any one connection.
func memoryPeaks(s *Server) (stop func() (total, perConn int64)) {
	var mu sync.Mutex
	var total, perConn int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			st := s.Stats()
			c := maxConnCharge(s)
			mu.Lock()
			total, perConn = max(total, st.RequestMemory), max(perConn, c)
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() (int64, int64) {
		close(done)
		<-finished
		mu.Lock()
		defer mu.Unlock()
		return total, perConn
	}
}

// maxConnCharge returns the largest header charge of the Server's
// connections now.
func maxConnCharge(s *Server) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem.mu.Lock()
	defer s.mem.mu.Unlock()
	var m int64
	for sc := range s.conns {
		m = max(m, sc.mem.used)
	}
	return m
}

// activeStreams counts the request streams whose goroutine runs.
func activeStreams(s *Server) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for sc := range s.conns {
		sc.mu.Lock()
		n += sc.active
		sc.mu.Unlock()
	}
	return n
}

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
