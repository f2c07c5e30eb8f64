package http3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

func TestGetSmall(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Proto != "HTTP/3.0" || r.TLS == nil || r.TLS.NegotiatedProtocol != "h3" {
			t.Errorf("request %s, TLS %+v", r.Proto, r.TLS)
		}
		if r.Host != strings.TrimPrefix(r.Host, "https://") || r.Host == "" {
			t.Errorf("host %q", r.Host)
		}
		w.Header().Set("X-Path", r.URL.Path)
		_, _ = io.WriteString(w, "hello, "+r.URL.Query().Get("who"))
	}))
	tr := newTransport(t)
	c := &http.Client{Transport: tr}
	for i := 0; i < 3; i++ {
		resp, err := c.Get(ts.url("/greet?who=satellite"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || string(b) != "hello, satellite" || resp.Header.Get("X-Path") != "/greet" ||
			resp.ContentLength != int64(len(b)) || resp.Proto != "HTTP/3.0" {
			t.Fatalf("response %d %q %v cl=%d", resp.StatusCode, b, resp.Header, resp.ContentLength)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("content-type %q", ct)
		}
		if d, err := http.ParseTime(resp.Header.Get("Date")); err != nil || time.Since(d).Abs() > time.Minute {
			t.Errorf("date %q: %v", resp.Header.Get("Date"), err)
		}
	}
	tr.mu.Lock()
	n := len(tr.all)
	tr.mu.Unlock()
	if n != 1 {
		t.Errorf("%d connections for 3 requests to one authority", n)
	}
}

func TestGetLarge(t *testing.T) {
	testkit.CheckGoroutines(t)
	const size = 50 << 20
	data := testkit.Payload(size, 1)
	want := sha256.Sum256(data)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		_, _ = io.Copy(w, bytes.NewReader(data))
	}))
	c := &http.Client{Transport: newTransport(t)}
	start := time.Now()
	resp, err := c.Get(ts.url("/big"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, sum, err := testkit.ReadAllSum(resp.Body)
	if err != nil || n != size || sum != want {
		t.Fatalf("read %d bytes, err %v, sum match %v", n, err, sum == want)
	}
	d := time.Since(start)
	t.Logf("50 MiB in %v (%.0f Mbit/s)", d, float64(size*8)/d.Seconds()/1e6)
}

// TestStreaming shows that neither body is buffered whole: each side
// sees the other's first chunk before the second is written.
func TestStreaming(t *testing.T) {
	testkit.CheckGoroutines(t)
	gotFirst := make(chan struct{})
	sentSecond := make(chan struct{})
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, first); err != nil || string(first) != "ping1" {
			t.Errorf("first chunk %q %v", first, err)
			return
		}
		close(gotFirst) // the client writes the rest only now
		h := sha256.New()
		h.Write(first)
		if _, err := io.Copy(h, r.Body); err != nil {
			t.Error(err)
			return
		}
		w.Header().Set("X-Sum", hex.EncodeToString(h.Sum(nil)))
		_, _ = io.WriteString(w, "pong1")
		w.(http.Flusher).Flush()
		<-sentSecond
		_, _ = io.WriteString(w, "pong2")
	}))
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.WriteString(pw, "ping1")
		<-gotFirst
		_, _ = pw.Write(testkit.Payload(1<<20, 7))
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, ts.url("/echo"), pr)
	resp, err := newTransport(t).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	want := sha256.Sum256(append([]byte("ping1"), testkit.Payload(1<<20, 7)...))
	if resp.Header.Get("X-Sum") != hex.EncodeToString(want[:]) {
		t.Fatalf("server's sum %s", resp.Header.Get("X-Sum"))
	}
	first := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != "pong1" {
		t.Fatalf("first response chunk %q %v", first, err)
	}
	close(sentSecond) // the server writes the rest only now
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "pong2" {
		t.Fatalf("rest %q %v", rest, err)
	}
}

func TestPostLarge(t *testing.T) {
	testkit.CheckGoroutines(t)
	const size = 20 << 20
	data := testkit.Payload(size, 3)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != size {
			t.Errorf("ContentLength %d", r.ContentLength)
		}
		n, sum, err := testkit.ReadAllSum(r.Body)
		if err != nil {
			t.Error(err)
		}
		fmt.Fprintf(w, "%d %x", n, sum)
	}))
	c := &http.Client{Transport: newTransport(t)}
	resp, err := c.Post(ts.url("/upload"), "application/octet-stream", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := fmt.Sprintf("%d %x", size, sha256.Sum256(data)); string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
}

func TestFileServerRange(t *testing.T) {
	testkit.CheckGoroutines(t)
	dir := t.TempDir()
	content := testkit.Payload(100<<10, 5)
	if err := os.WriteFile(filepath.Join(dir, "f.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, http.FileServer(http.Dir(dir)))
	c := &http.Client{Transport: newTransport(t)}

	resp, err := c.Get(ts.url("/f.bin"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(b, content) || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("full GET: %d, %d bytes", resp.StatusCode, len(b))
	}
	lastMod := resp.Header.Get("Last-Modified")

	req, _ := http.NewRequest(http.MethodGet, ts.url("/f.bin"), nil)
	req.Header.Set("Range", "bytes=1000-1999")
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, content[1000:2000]) ||
		resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 1000-1999/%d", len(content)) {
		t.Fatalf("range: %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Range"), len(b))
	}

	req, _ = http.NewRequest(http.MethodGet, ts.url("/f.bin"), nil)
	req.Header.Set("If-Modified-Since", lastMod)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotModified || len(b) != 0 {
		t.Fatalf("conditional: %d, %d bytes", resp.StatusCode, len(b))
	}

	req, _ = http.NewRequest(http.MethodHead, ts.url("/f.bin"), nil)
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != int64(len(content)) {
		t.Fatalf("HEAD: %d, %d bytes, length %d", resp.StatusCode, len(b), resp.ContentLength)
	}

	resp, err = c.Get(ts.url("/missing"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Fatalf("missing file: %d", resp.StatusCode)
	}
}

func TestTrailers(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Error(err)
		}
		if got := r.Trailer.Get("X-Client-Sum"); got != fmt.Sprintf("%x", sha256.Sum256(b)) {
			t.Errorf("request trailer %q, trailers %v", got, r.Trailer)
		}
		w.Header().Set("Trailer", "X-Server-Sum")
		_, _ = w.Write(b)
		w.(http.Flusher).Flush()
		w.Header().Set("X-Server-Sum", fmt.Sprintf("%x", sha256.Sum256(b)))
		w.Header().Set(http.TrailerPrefix+"X-Undeclared", "yes")
	}))
	data := testkit.Payload(100<<10, 9)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPut, ts.url("/t"), pr)
	req.Trailer = http.Header{"X-Client-Sum": nil}
	go func() {
		_, _ = pw.Write(data)
		req.Trailer.Set("X-Client-Sum", fmt.Sprintf("%x", sha256.Sum256(data)))
		pw.Close()
	}()
	resp, err := newTransport(t).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, ok := resp.Trailer["X-Server-Sum"]; !ok {
		t.Errorf("announced trailers %v", resp.Trailer)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(b, data) {
		t.Fatalf("body: %d bytes, %v", len(b), err)
	}
	if got := resp.Trailer.Get("X-Server-Sum"); got != fmt.Sprintf("%x", sha256.Sum256(data)) {
		t.Errorf("response trailer %q", got)
	}
	if got := resp.Trailer.Get("X-Undeclared"); got != "yes" {
		t.Errorf("prefixed trailer %q", got)
	}
}

func TestConcurrentRequests(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := len(r.URL.Path)
		_, _ = w.Write(testkit.Payload(n*1000, uint64(n)))
	}))
	tr := newTransport(t)
	c := &http.Client{Transport: tr}
	const workers, perWorker = 50, 8
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < perWorker; j++ {
				path := "/" + strings.Repeat("x", (i*perWorker+j)%97)
				resp, err := c.Get(ts.url(path))
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Equal(b, testkit.Payload(len(path)*1000, uint64(len(path)))) {
					errs <- fmt.Errorf("%s: %d bytes, %v", path, len(b), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	tr.mu.Lock()
	n := len(tr.all)
	tr.mu.Unlock()
	if n != 1 {
		t.Errorf("%d connections", n)
	}
}

// TestStreamLimit: the server's QUIC stream limit bounds the requests
// under way; the others wait for a stream.
func TestStreamLimit(t *testing.T) {
	testkit.CheckGoroutines(t)
	var mu sync.Mutex
	cur, peak := 0, 0
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur++
		peak = max(peak, cur)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		cur--
		mu.Unlock()
	}), func(s *Server) { s.QUICConfig = &quicConfigStreams4 })
	c := &http.Client{Transport: newTransport(t)}
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(ts.url("/"))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if peak > 4 || peak < 2 {
		t.Errorf("peak of %d concurrent requests with a limit of 4", peak)
	}
}

func TestContextCancel(t *testing.T) {
	testkit.CheckGoroutines(t)
	handlerDone := make(chan error, 2)
	stallDone := make(chan struct{})
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			// The client's cancellation cancels the handler's context.
			<-r.Context().Done()
			close(stallDone)
			return
		}
		// Stream until the client goes away.
		buf := make([]byte, 16<<10)
		for {
			if _, err := w.Write(buf); err != nil {
				handlerDone <- err
				return
			}
		}
	}))
	tr := newTransport(t)

	// Canceled while waiting for the response header.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url("/stall"), nil)
	start := time.Now()
	_, err := tr.RoundTrip(req)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("RoundTrip: %v after %v", err, time.Since(start))
	}

	// Canceled while reading the body.
	ctx, cancel = context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, ts.url("/stream"), nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 100<<10)); err != nil {
		t.Fatal(err)
	}
	cancel()
	_, err = io.Copy(io.Discard, resp.Body)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("body read after cancel: %v", err)
	}
	resp.Body.Close()
	// The server's writes fail: the stream was canceled.
	select {
	case err := <-handlerDone:
		var e *Error
		if !errors.As(fromQUIC(err), &e) || e.Code != ErrCodeRequestCancelled {
			t.Errorf("handler's write error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler kept writing")
	}
	select {
	case <-stallDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not canceled")
	}

	// Body.Close before the end cancels the stream too; the connection
	// goes on.
	resp, err = tr.RoundTrip(mustRequest(t, ts.url("/stream")))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadFull(resp.Body, make([]byte, 1000))
	resp.Body.Close()
	if _, err := resp.Body.Read(make([]byte, 10)); err == nil {
		t.Error("read after Close succeeded")
	}
	select {
	case <-handlerDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler kept writing after Body.Close")
	}
}

func mustRequest(t testing.TB, url string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestShutdown: a request under way finishes after GOAWAY; a new request
// goes to a new connection, which the shut-down server refuses.
func TestShutdown(t *testing.T) {
	testkit.CheckGoroutines(t)
	started := make(chan struct{})
	release := make(chan struct{})
	data := testkit.Payload(4<<20, 11)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(started)
			<-release
			_, _ = w.Write(data)
		}
	}))
	tr := newTransport(t)
	type result struct {
		n   int64
		sum [32]byte
		err error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := tr.RoundTrip(mustRequest(t, ts.url("/slow")))
		if err != nil {
			res <- result{err: err}
			return
		}
		n, sum, err := testkit.ReadAllSum(resp.Body)
		resp.Body.Close()
		res <- result{n, sum, err}
	}()
	<-started
	shut := make(chan error, 1)
	go func() { shut <- ts.Shutdown(context.Background()) }()
	// The client learns of the GOAWAY: the connection leaves the pool.
	deadline := time.Now().Add(5 * time.Second)
	for {
		tr.mu.Lock()
		n := len(tr.conns)
		tr.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no GOAWAY")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a request under way", err)
	default:
	}
	close(release)
	r := <-res
	if r.err != nil || r.n != int64(len(data)) || r.sum != sha256.Sum256(data) {
		t.Fatalf("request under way: %d bytes, %v", r.n, r.err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url("/slow"), nil)
	if _, err := tr.RoundTrip(req); err == nil {
		t.Fatal("request after Shutdown succeeded")
	}
}

func TestHeaderLimit(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), func(s *Server) { s.MaxHeaderBytes = 4096 })
	tr := newTransport(t)
	// Before the server's SETTINGS arrive the client cannot know the
	// limit; the server answers 431. Afterwards the client refuses to
	// send.
	req := mustRequest(t, ts.url("/"))
	req.Header.Set("X-Big", strings.Repeat("a", 8000))
	resp, err := tr.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("status %d", resp.StatusCode)
		}
	} else if !strings.Contains(err.Error(), "limit") {
		t.Fatal(err)
	}
	req = mustRequest(t, ts.url("/"))
	req.Header.Set("X-Small", strings.Repeat("a", 1000))
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestHandlerPanic(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/panic" {
			panic(http.ErrAbortHandler)
		}
		_, _ = io.WriteString(w, "fine")
	}))
	tr := newTransport(t)
	_, err := tr.RoundTrip(mustRequest(t, ts.url("/panic")))
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrCodeInternalError || !e.Remote {
		t.Fatalf("panic: %v", err)
	}
	resp, err := tr.RoundTrip(mustRequest(t, ts.url("/ok")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "fine" {
		t.Fatalf("after a panic: %q", b)
	}
}
