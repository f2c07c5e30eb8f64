package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic"
)

// TestHeaderTrickle (issue #13): a stream that sent its header one byte a
// second was never cut off. Now it is reset with H3_REQUEST_INCOMPLETE
// at ReadHeaderTimeout from its arrival, while a header that arrives
// slowly but whole within the timeout is served.
func TestHeaderTrickle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Server{Handler: okHandler}
		e := newMemEnv(t, s)
		trickle := func(c *quic.Conn, every time.Duration) <-chan attackStream {
			b := requestHeaders("GET", "/")
			st := rawStream(t, c, b[:1])
			go func() {
				for _, x := range b[1:] {
					time.Sleep(every)
					if _, err := st.Write([]byte{x}); err != nil {
						return
					}
				}
				_ = st.Close()
			}()
			return streamEnd(st)
		}
		start := time.Now()
		slow := trickle(e.dialRaw(), time.Second)
		// Within the timeout: a byte every 200 ms.
		patient := trickle(e.dialRaw(), 200*time.Millisecond)
		if a := <-patient; a.code != -1 {
			t.Errorf("a header sent whole in %v was reset with %#x", a.at.Sub(start), a.code)
		}
		a := <-slow
		if ErrCode(a.code) != ErrCodeRequestIncomplete {
			t.Errorf("the trickling stream ended with %#x", a.code)
		}
		if d := a.at.Sub(start); d < DefaultReadHeaderTimeout || d > DefaultReadHeaderTimeout+100*time.Millisecond {
			t.Errorf("the trickling stream was reset after %v, want %v and a one-way delay", d, DefaultReadHeaderTimeout)
		}
		if st := s.Stats(); st.HeaderTimeouts != 1 || st.RequestMemory != 0 {
			t.Errorf("stats %+v", st)
		}
		// The client's writes end; its goroutine with them.
		time.Sleep(2 * time.Second)
	})
}

// TestSilentStreams (issue #13): 200 connections with 100 streams of one
// byte each held 20,000 streams for as long as the clients liked. Here
// 20 connections do it: every stream is reset at ReadHeaderTimeout, no
// goroutine reads any of them after that, nothing stays charged, and the
// clients may open as many streams again (the QUIC layer gave the
// credit back).
func TestSilentStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const conns, streams = 20, 100
		s := &Server{Handler: okHandler}
		e := newMemEnv(t, s)
		var ends []<-chan attackStream
		var cs []*quic.Conn
		for range conns {
			cs = append(cs, e.dialRaw())
			ends = append(ends, partialHeaders(t, cs[len(cs)-1], streams, 100, 0))
		}
		time.Sleep(time.Second)
		if st := s.Stats(); st.ReadingHeaders != conns*streams || st.RequestMemory != conns*streams*(readBufferCost+waitCost) {
			t.Errorf("before the timeout: %+v", st)
		}
		if n := goroutinesIn("(*serverConn).handleStream"); n != conns*streams {
			t.Errorf("%d goroutines read headers, want %d", n, conns*streams)
		}
		time.Sleep(DefaultReadHeaderTimeout)
		for _, ch := range ends {
			for _, a := range collect(t, ch, streams) {
				if ErrCode(a.code) != ErrCodeRequestIncomplete {
					t.Fatalf("a stream ended with %#x", a.code)
				}
			}
		}
		if st := s.Stats(); st.HeaderTimeouts != conns*streams || st.RequestMemory != 0 || st.ReadingHeaders != 0 {
			t.Errorf("after the timeout: %+v", st)
		}
		if n := goroutinesIn("(*serverConn).handleStream"); n != 0 {
			t.Errorf("%d goroutines still read headers", n)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for i := range streams {
			st, err := cs[0].OpenStreamSync(ctx)
			if err != nil {
				t.Fatalf("stream %d of a new round: %v", i, err)
			}
			st.CancelWrite(0)
			st.CancelRead(0)
		}
		// Streams the client resets free what they held at once.
		time.Sleep(100 * time.Millisecond)
		if st := s.Stats(); st.RequestMemory != 0 || st.ReadingHeaders != 0 {
			t.Errorf("after the client's resets: %+v", st)
		}
		// The worker goroutines that read them end after workerIdle,
		// at the second sweep.
		time.Sleep(2*workerIdle + time.Second)
		if n := goroutinesIn("(*workerPool).loop"); n != 0 {
			t.Errorf("%d idle workers left", n)
		}
	})
}

// TestIdleBody: a handler that reads the body of a client gone silent
// gets an error after IdleStreamTimeout, and the stream is reset with
// H3_REQUEST_INCOMPLETE; a client that sends a byte more often than
// that, however slowly, is not cut off.
func TestIdleBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 5 * time.Second
		type result struct {
			n       int64
			err     error
			ctxDone bool
			at      time.Time
		}
		results := make(chan result, 2)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				<-r.Context().Done()
			}
			results <- result{n, err, r.Context().Err() != nil, time.Now()}
			_, _ = io.WriteString(w, "ok")
		})
		s := &Server{Handler: h, IdleStreamTimeout: idle}
		e := newMemEnv(t, s)
		start := time.Now()
		// Silent after 3 bytes of 100.
		b := requestHeaders("POST", "/", "content-length", "100")
		b = appendFrameHeader(b, frameData, 100)
		silent := streamEnd(rawStream(t, e.dialRaw(), append(b, "abc"...)))
		r := <-results
		if d := r.at.Sub(start); r.n != 3 || r.err == nil || !r.ctxDone || d < idle || d > idle*9/8+time.Second {
			t.Errorf("silent client: %d bytes, %v, context done %v, after %v", r.n, r.err, r.ctxDone, d)
		}
		if a := <-silent; ErrCode(a.code) != ErrCodeRequestIncomplete {
			t.Errorf("silent client's stream ended with %#x", a.code)
		}

		// A byte every 4 s: 10 bytes in 40 s.
		b = requestHeaders("POST", "/", "content-length", "10")
		b = appendFrameHeader(b, frameData, 10)
		st := rawStream(t, e.dialRaw(), b)
		go func() {
			for range 10 {
				time.Sleep(4 * time.Second)
				_, _ = st.Write([]byte{'x'})
			}
			_ = st.Close()
		}()
		if a := <-streamEnd(st); a.code != -1 {
			t.Errorf("slow client's stream ended with %#x", a.code)
		}
		if r := <-results; r.n != 10 || r.err != nil {
			t.Errorf("slow client: %d bytes, %v", r.n, r.err)
		}
		if st := s.Stats(); st.IdleReads != 1 || st.RequestMemory != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestHandlerReadDeadline: a deadline the handler sets is its own: the
// read fails with os.ErrDeadlineExceeded, the stream lives on and the
// response goes out, as with net/http.
func TestHandlerReadDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(time.Second))
			_, err := io.Copy(io.Discard, r.Body)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("read error %v, want os.ErrDeadlineExceeded", err)
			}
			_, _ = io.WriteString(w, "late")
		})
		s := &Server{Handler: h, IdleStreamTimeout: 10 * time.Second}
		e := newMemEnv(t, s)
		b := requestHeaders("POST", "/", "content-length", "100")
		st := rawStream(t, e.dialRaw(), appendFrameHeader(b, frameData, 100))
		if a := <-streamEnd(st); a.code != -1 {
			t.Errorf("stream ended with %#x", a.code)
		}
		if st := s.Stats(); st.IdleReads != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// TestStalledResponse: a client that stops reading a large response holds
// its handler only ResponseStallTimeout: the handler's write fails, its
// context ends, and the client sees the response reset with
// H3_REQUEST_CANCELLED. A client that reads slowly but steadily gets the
// whole response.
func TestStalledResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const stall = 10 * time.Second
		h := &slowHandler{done: make(chan slowEnd, 1)}
		s := &Server{Handler: h, ResponseStallTimeout: stall}
		e := newMemEnv(t, s)
		tr := e.transport()
		tr.QUICConfig = &quic.Config{
			InitialStreamReceiveWindow: 256 << 10, MaxStreamReceiveWindow: 256 << 10,
			InitialConnectionReceiveWindow: 512 << 10, MaxConnectionReceiveWindow: 512 << 10,
		}
		start := time.Now()
		resp, err := tr.RoundTrip(memGet(t, "/big"))
		if err != nil {
			t.Fatal(err)
		}
		end := <-h.done
		var e3 *Error
		if d := time.Since(start); !errors.As(end.err, &e3) || e3.Code != ErrCodeRequestCancelled || !end.ctxDone || d < stall || d > stall*9/8+time.Second {
			t.Errorf("handler ended with %v, context done %v, after %v", end.err, end.ctxDone, d)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		if !errors.As(err, &e3) || e3.Code != ErrCodeRequestCancelled {
			t.Errorf("the client read the rest with %v, want H3_REQUEST_CANCELLED", err)
		}
		_ = resp.Body.Close()

		// 64 KiB every 2 s: the server's writes move at each of the
		// client's window updates, every 128 KiB read.
		h.written.Store(0)
		resp, err = tr.RoundTrip(memGet(t, "/big"))
		if err != nil {
			t.Fatal(err)
		}
		n, err := slowRead(resp.Body, 64<<10, 2*time.Second)
		_ = resp.Body.Close()
		if end := <-h.done; n != slowBody || err != nil || end.err != nil {
			t.Errorf("slow reader: %d bytes, %v; handler %v", n, err, end.err)
		}
		if st := s.Stats(); st.StalledWrites != 1 {
			t.Errorf("stats %+v", st)
		}
	})
}

// memGet is a GET of path on the memnet server.
func memGet(t *testing.T, path string) *http.Request {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, memURL(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// slowRead reads r to its end, chunk bytes every period.
func slowRead(r io.Reader, chunk int64, period time.Duration) (int64, error) {
	var total int64
	for {
		n, err := io.CopyN(io.Discard, r, chunk)
		total += n
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		time.Sleep(period)
	}
}

// TestIdleHeader: an IdleStreamTimeout shorter than ReadHeaderTimeout
// cuts off a silent header first.
func TestIdleHeader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 2 * time.Second
		s := &Server{Handler: okHandler, IdleStreamTimeout: idle}
		e := newMemEnv(t, s)
		start := time.Now()
		a := <-streamEnd(rawStream(t, e.dialRaw(), []byte{frameHeaders}))
		if d := a.at.Sub(start); ErrCode(a.code) != ErrCodeRequestIncomplete || d < idle || d > idle*9/8+time.Second {
			t.Errorf("silent header reset with %#x after %v", a.code, d)
		}
		if st := s.Stats(); st.IdleReads != 1 || st.HeaderTimeouts != 0 || st.RequestMemory != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}
