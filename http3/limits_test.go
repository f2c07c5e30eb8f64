package http3

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
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

// requestHeaders encodes the HEADERS frame of a GET of path, with the
// extra fields given as name, value pairs.
func requestHeaders(method, path string, extra ...string) []byte {
	fw := getFieldWriter()
	defer putFieldWriter(fw)
	fw.field(":method", method)
	fw.field(":scheme", "https")
	fw.field(":authority", "localhost")
	fw.field(":path", path)
	for i := 0; i+1 < len(extra); i += 2 {
		fw.field(extra[i], extra[i+1])
	}
	return fw.frame(nil)
}

// rawStream opens a request stream on c and writes b on it.
func rawStream(t *testing.T, c *quic.Conn, b []byte) *quic.Stream {
	t.Helper()
	st, err := c.OpenStreamSync(context.Background())
	if err != nil {
		t.Fatalf("OpenStreamSync: %v", err)
	}
	if _, err := st.Write(b); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return st
}

// streamEnd reads st to its end in a goroutine and reports how it
// ended: the code of the server's reset, or -1 after a whole response.
func streamEnd(st *quic.Stream) <-chan attackStream {
	out := make(chan attackStream, 1)
	go func() {
		_, err := io.Copy(io.Discard, st)
		out <- attackStream{code: resetCode(err), at: time.Now()}
	}()
	return out
}

// goroutinesIn counts the goroutines whose stack holds fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 8<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), fn)
}
