package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	qghttp3 "github.com/quic-go/quic-go/http3"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// serveFiles writes a directory with a random file of n bytes, big.bin,
// and returns the directory and the file's bytes.
func serveFiles(t *testing.T, n int) (string, []byte) {
	t.Helper()
	dir := t.TempDir()
	data := make([]byte, n)
	_, _ = rand.Read(data)
	serveMust(t, os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644))
	return dir, data
}

// TestServeGetALPN: the client uses the protocol the server picks; a
// client forced to a protocol the server does not offer gets a clear
// error (not a usage error: exit status 1).
func TestServeGetALPN(t *testing.T) {
	checkNoGoroutines(t)
	dir, data := serveFiles(t, 1000)
	for _, c := range []struct {
		server, client, want string
	}{
		{"h3,hq-interop", "", "h3"},
		{"hq-interop,h3", "", "hq-interop"},
		{"hq-interop", "", "hq-interop"},
		{"h3", "", "h3"},
		{"h3,hq-interop", "hq-interop,h3", "h3"},
		{"h3,hq-interop", "hq-interop", "hq-interop"},
		{"h3", "hq-interop", ""},
		{"hq-interop", "h3", ""},
	} {
		t.Run(c.server+"_"+c.client, func(t *testing.T) {
			h := startServeHandle(t, dir, "--alpn", c.server)
			args := []string{"https://" + h.addr + "/big.bin", "--pin", h.fp, "--json"}
			if c.client != "" {
				args = append(args, "--alpn", c.client)
			}
			stdout, _, err := runGetCmd(t, args...)
			if c.want == "" {
				if err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "the server speaks none of the application protocols offered ("+c.client+"; see --alpn)") {
					t.Errorf("forced mismatch: %v", err)
				}
				return
			}
			var rep getReport
			if jerr := json.Unmarshal([]byte(stdout), &rep); err != nil || jerr != nil {
				t.Fatalf("%v (%v)", err, jerr)
			}
			if rep.Protocol != c.want || rep.Bytes != int64(len(data)) {
				t.Errorf("protocol %q, %d bytes; want %q, %d", rep.Protocol, rep.Bytes, c.want, len(data))
			}
			if !strings.Contains(h.stdout.String(), "(ALPN "+strings.ReplaceAll(c.server, ",", ", ")+")") {
				t.Errorf("serve's banner:\n%s", h.stdout.String())
			}
		})
	}
}

// h3Client is a net/http client over satquic's HTTP/3 Transport that
// trusts any certificate.
func h3Client(t *testing.T) *http.Client {
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
	t.Cleanup(func() { _ = tr.Close() })
	return &http.Client{Transport: tr}
}

// TestServeH3Range: Range requests, HEAD and directory listings through
// serve over HTTP/3 with net/http's client, and the access log of -v.
func TestServeH3Range(t *testing.T) {
	checkNoGoroutines(t)
	dir, data := serveFiles(t, 300_000)
	serveMust(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	h := startServeHandle(t, dir, "-v")
	client := h3Client(t)
	base := "https://" + h.addr

	for _, c := range []struct {
		rng        string
		start, end int // the bytes expected, end exclusive
	}{
		{"bytes=100-199", 100, 200},
		{"bytes=299990-", 299990, 300_000},
		{"bytes=-10", 299990, 300_000},
		{"bytes=0-0", 0, 1},
	} {
		req, _ := http.NewRequest(http.MethodGet, base+"/big.bin", nil)
		req.Header.Set("Range", c.rng)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := fmt.Sprintf("bytes %d-%d/300000", c.start, c.end-1)
		if err != nil || resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[c.start:c.end]) || resp.Header.Get("Content-Range") != want {
			t.Errorf("Range %s: %d, %d bytes, Content-Range %q, %v", c.rng, resp.StatusCode, len(body), resp.Header.Get("Content-Range"), err)
		}
	}

	// A range beyond the end.
	req, _ := http.NewRequest(http.MethodGet, base+"/big.bin", nil)
	req.Header.Set("Range", "bytes=400000-")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("range beyond the end: %d", resp.StatusCode)
	}

	// HEAD gives the length, no body.
	resp, err = client.Head(base + "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != 300_000 {
		t.Errorf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}

	// A directory is listed.
	resp, err = client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	listing, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(listing), `href="big.bin"`) || !strings.Contains(string(listing), `href="sub/"`) {
		t.Errorf("listing: %d\n%s", resp.StatusCode, listing)
	}

	h.stderr.waitFor(t, regexp.MustCompile(`127\.0\.0\.1:\d+ h3 GET /big.bin: 206, 100 bytes in `))
	h.stderr.waitFor(t, regexp.MustCompile(`h3 HEAD /big.bin: 200, 0 bytes`))
	client.CloseIdleConnections()
	if err := h.stop(t); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.stdout.String(), "served 1 connections (h3 1, hq-interop 0), 7 requests (h3 7, hq-interop 0)") {
		t.Errorf("counters:\n%s", h.stdout.String())
	}
}

// TestServeQuicGoClient: quic-go's HTTP/3 client downloads from serve,
// whole and by range.
func TestServeQuicGoClient(t *testing.T) {
	checkNoGoroutines(t)
	dir, data := serveFiles(t, 2<<20)
	h := startServeHandle(t, dir)
	tr := &qghttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	client := &http.Client{Transport: tr}

	resp, err := client.Get("https://" + h.addr + "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
		t.Fatalf("download: %d, %d of %d bytes, %v", resp.StatusCode, len(body), len(data), err)
	}

	req, _ := http.NewRequest(http.MethodGet, "https://"+h.addr+"/big.bin", nil)
	req.Header.Set("Range", "bytes=1000-1999")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusPartialContent || !bytes.Equal(body, data[1000:2000]) {
		t.Errorf("range: %d, %d bytes, %v", resp.StatusCode, len(body), err)
	}

	resp, err = client.Get("https://" + h.addr + "/missing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("missing: %d", resp.StatusCode)
	}
}

// shutdownPause is how long the shutdown tests let the server begin its
// shutdown before they read on.
const shutdownPause = 100 * time.Millisecond

// TestServeShutdownH3: an HTTP/3 response under way when the server is
// interrupted is delivered whole, the connection gets a GOAWAY, and serve
// returns once it is done.
func TestServeShutdownH3(t *testing.T) {
	checkNoGoroutines(t)
	dir, data := serveFiles(t, 4<<20)
	h := startServeHandle(t, dir)
	client := h3Client(t)
	resp, err := client.Get("https://" + h.addr + "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Take a little of the body; flow control holds the rest at the
	// server, which must wait for this reader.
	first := make([]byte, 1000)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- h.stop(t) }()
	time.Sleep(shutdownPause)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !bytes.Equal(append(first, rest...), data) {
		t.Fatalf("body across the shutdown: %d of %d bytes, %v", len(first)+len(rest), len(data), err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after the response")
	}
	if !strings.Contains(h.stdout.String(), "served 1 connections (h3 1, hq-interop 0), 1 requests") {
		t.Errorf("counters:\n%s", h.stdout.String())
	}
	// The server is gone: a new request fails.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+h.addr+"/big.bin", nil)
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Error("a request after the shutdown succeeded")
	}
}

// slowWriter stops the server at its first write and waits, so that the
// download it receives is under way during the shutdown.
type slowWriter struct {
	buf  bytes.Buffer
	stop func()
}

func (w *slowWriter) Write(p []byte) (int, error) {
	if w.stop != nil {
		w.stop()
		w.stop = nil
		time.Sleep(shutdownPause)
	}
	return w.buf.Write(p)
}

// TestServeShutdownHQ: an hq-interop download under way when the server is
// interrupted completes; the connection closes after it.
func TestServeShutdownHQ(t *testing.T) {
	checkNoGoroutines(t)
	dir, data := serveFiles(t, 4<<20)
	h := startServeHandle(t, dir, "--alpn", "hq-interop")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := quic.DialAddr(ctx, h.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{hq.ALPN}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	stopped := make(chan error, 1)
	w := &slowWriter{stop: func() { go func() { stopped <- h.stop(t) }() }}
	n, err := hq.Get(ctx, c, "/big.bin", w, nil)
	if err != nil || !bytes.Equal(w.buf.Bytes(), data) {
		t.Fatalf("download across the shutdown: %d of %d bytes, %v", n, len(data), err)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop after the download")
	}
	select {
	case <-c.Context().Done():
	case <-time.After(5 * time.Second):
		t.Error("the server did not close the drained connection")
	}
	if !strings.Contains(h.stdout.String(), "served 1 connections (h3 0, hq-interop 1), 1 requests (h3 0, hq-interop 1)") {
		t.Errorf("counters:\n%s", h.stdout.String())
	}
}

// TestServeShutdownTimeout: a client that stops reading does not hold the
// server beyond --shutdown-timeout.
func TestServeShutdownTimeout(t *testing.T) {
	checkNoGoroutines(t)
	dir, _ := serveFiles(t, 4<<20)
	h := startServeHandle(t, dir, "--shutdown-timeout", "200ms")
	// Windows smaller than the file, whatever the client's defaults.
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, QUICConfig: &quic.Config{
		InitialStreamReceiveWindow: 512 << 10, InitialConnectionReceiveWindow: 768 << 10,
	}}
	t.Cleanup(func() { _ = tr.Close() })
	client := &http.Client{Transport: tr}
	resp, err := client.Get("https://" + h.addr + "/big.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	if err := h.stop(t); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond || d > 5*time.Second {
		t.Errorf("serve stopped after %v with a stalled client; want about 200ms", d)
	}
	if _, err := io.ReadAll(resp.Body); err == nil {
		t.Error("the stalled response ended without an error")
	}
}
