package http3

import (
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	qghttp3 "github.com/quic-go/quic-go/http3"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
)

// TestRetryRejected: a request the server refuses with
// H3_REQUEST_REJECTED, and one refused by GOAWAY, go again on a new
// connection.
func TestRetryRejected(t *testing.T) {
	testkit.CheckGoroutines(t)
	var conns, requests atomic.Int32
	url := rawServer(t, func(qc *quic.Conn) {
		conns.Add(1)
		ctrl := openUni(t, qc, controlStream(okSettings), false)
		for {
			st, err := qc.AcceptStream(context.Background())
			if err != nil {
				return
			}
			switch requests.Add(1) {
			case 1:
				st.CancelRead(quic.StreamErrorCode(ErrCodeRequestRejected))
				st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestRejected))
			case 2:
				// A GOAWAY that excludes this request, left unanswered.
				_, _ = ctrl.Write(appendIDFrame(nil, frameGoAway, uint64(st.StreamID())))
			default:
				_, _ = io.Copy(io.Discard, st)
				fw := getFieldWriter()
				fw.field(":status", "200")
				_, _ = st.Write(fw.frame(nil))
				putFieldWriter(fw)
				_, _ = st.Write(frameBytes(frameData, []byte("third time")))
				_ = st.Close()
			}
		}
	})
	tr := newTransport(t)
	req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader("replayable"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "third time" || conns.Load() != 2 || requests.Load() != 3 {
		t.Fatalf("%q after %d requests on %d connections", b, requests.Load(), conns.Load())
	}
}

func TestExpectContinue(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(b)
	}))
	qc := rawDial(t, ts.addr)
	st, _ := qc.OpenStream()
	_, _ = st.Write(frameBytes(frameHeaders, encodeFields(":method", "PUT", ":scheme", "https", ":authority", "a", ":path", "/",
		"expect", "100-continue", "content-length", "4")))
	r := reader(nil)
	r.Reset(st)
	f, err := readRequestFrame(r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := decodeFieldSection(f.payload, 1000)
	if status, _, err := parseResponseFields(fields); status != 100 || err != nil {
		t.Fatalf("interim response %d %v", status, err)
	}
	_, _ = st.Write(frameBytes(frameData, []byte("body")))
	_ = st.Close()
	f, _ = readRequestFrame(r, 1000)
	fields, _ = decodeFieldSection(f.payload, 1000)
	if status, _, _ := parseResponseFields(fields); status != 200 {
		t.Fatalf("final status %d", status)
	}
	f, err = readRequestFrame(r, 1000)
	if err != nil || f.typ != frameData || f.length != 4 {
		t.Fatalf("%+v %v", f, err)
	}
}

func TestListenAndServe(t *testing.T) {
	testkit.CheckGoroutines(t)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	s := &Server{TLSConfig: serverTLS(), Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "up")
	})}
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe(addr) }()
	tr := newTransport(t)
	var resp *http.Response
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr+"/", nil)
		resp, err = tr.RoundTrip(req)
		cancel()
		if err == nil || i == 20 {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "up" {
		t.Fatalf("%q", b)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != ErrServerClosed {
		t.Fatalf("ListenAndServe returned %v", err)
	}
}

// TestServerClose: Close fails the requests under way at once.
func TestServerClose(t *testing.T) {
	testkit.CheckGoroutines(t)
	started := make(chan struct{})
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	}))
	tr := newTransport(t)
	errc := make(chan error, 1)
	go func() {
		_, err := tr.RoundTrip(mustRequest(t, ts.url("/")))
		errc <- err
	}()
	<-started
	_ = ts.Close()
	select {
	case err := <-errc:
		var e *Error
		if !errors.As(err, &e) || !e.Connection || e.Code != ErrCodeNoError {
			t.Fatalf("request error %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("request still running after Close")
	}
}

// TestResponseHeaderLimit: a response header above the Transport's limit
// fails the request, not the connection.
func TestResponseHeaderLimit(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Header().Set("X-Big", strings.Repeat("b", 5000))
		}
	}))
	tr := newTransport(t)
	tr.MaxResponseHeaderBytes = 2000
	if _, err := tr.RoundTrip(mustRequest(t, ts.url("/big"))); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("big header: %v", err)
	}
	resp, err := tr.RoundTrip(mustRequest(t, ts.url("/small")))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestQuicGoClientShutdown: quic-go's client sees the GOAWAY of Shutdown;
// the request under way completes.
func TestQuicGoClientShutdown(t *testing.T) {
	testkit.CheckGoroutines(t)
	started := make(chan struct{})
	release := make(chan struct{})
	data := testkit.Payload(3<<20, 5)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = w.Write(data)
	}))
	tr := &qghttp3.Transport{TLSClientConfig: clientTLS()}
	defer tr.Close()
	errc := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(mustRequest(t, ts.url("/")))
		if err == nil {
			var sum [32]byte
			_, sum, err = testkit.ReadAllSum(resp.Body)
			resp.Body.Close()
			if err == nil && sum != sha256.Sum256(data) {
				err = errors.New("checksum mismatch")
			}
		}
		errc <- err
	}()
	<-started
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- ts.Shutdown(ctx)
	}()
	time.Sleep(20 * time.Millisecond)
	close(release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	t.Logf("Shutdown returned %v after the response", time.Since(start))
}

// TestGzip: the Transport asks for gzip and decompresses what it asked
// for, unless the request named its own Accept-Encoding.
func TestGzip(t *testing.T) {
	testkit.CheckGoroutines(t)
	text := strings.Repeat("satellite ", 1000)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "gzip" {
			_, _ = io.WriteString(w, text)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		_, _ = io.WriteString(zw, text)
		_ = zw.Close()
	}))
	tr := newTransport(t)
	resp, err := tr.RoundTrip(mustRequest(t, ts.url("/")))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != text || !resp.Uncompressed || resp.Header.Get("Content-Encoding") != "" {
		t.Fatalf("%d bytes, %v, uncompressed %v", len(b), err, resp.Uncompressed)
	}
	req := mustRequest(t, ts.url("/"))
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Uncompressed || len(b) >= len(text) {
		t.Fatalf("explicit gzip: %d bytes, uncompressed %v", len(b), resp.Uncompressed)
	}
}

// TestInsecureAndController: a client that skips certificate checks, and
// a handler that drives its response through http.ResponseController.
func TestInsecureAndController(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		if err := rc.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Error(err)
		}
		if err := rc.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Error(err)
		}
		_, _ = io.WriteString(w, "part one;")
		if err := rc.Flush(); err != nil {
			t.Error(err)
		}
		_, _ = io.WriteString(w, "part two")
	}))
	tr := &Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	resp, err := tr.RoundTrip(mustRequest(t, ts.url("/")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "part one;part two" || resp.ContentLength != -1 {
		t.Fatalf("%q, length %d", b, resp.ContentLength)
	}
	// Without InsecureSkipVerify, the self-signed certificate fails.
	tr2 := &Transport{}
	defer tr2.Close()
	if _, err := tr2.RoundTrip(mustRequest(t, ts.url("/"))); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
}
