package http3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"

	qghttp3 "github.com/quic-go/quic-go/http3"
	"github.com/satquic/satquic/internal/testkit"
)

// Interoperability with quic-go's HTTP/3 (a test-only peer) in both
// directions: downloads of several MiB, an upload, trailers, and a range
// request, each checked with SHA-256.

const interopSize = 6 << 20

// interopHandler serves /data?n=N (N pseudo-random bytes), /upload
// (answers the body's length and SHA-256, and a trailer with the same),
// and /range (http.ServeContent).
func interopHandler(t testing.TB) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(testkit.Payload(n, uint64(n)))
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		n, sum, err := testkit.ReadAllSum(r.Body)
		if err != nil {
			t.Errorf("upload: %v", err)
			http.Error(w, err.Error(), 500)
			return
		}
		w.Header().Set("Trailer", "X-Sum")
		fmt.Fprintf(w, "%d %x", n, sum)
		w.Header().Set("X-Sum", fmt.Sprintf("%x", sum))
	})
	content := testkit.Payload(1<<20, 42)
	mux.HandleFunc("/range", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "blob.bin", time.Unix(1e9, 0), bytes.NewReader(content))
	})
	return mux
}

// runInteropClient runs the interop requests with client against base.
func runInteropClient(t *testing.T, client *http.Client, base string) {
	t.Helper()
	// Two downloads at once on one connection.
	errs := make(chan error, 2)
	for _, n := range []int{interopSize, interopSize / 3} {
		go func() {
			resp, err := client.Get(fmt.Sprintf("%s/data?n=%d", base, n))
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			got, sum, err := testkit.ReadAllSum(resp.Body)
			if err == nil && (got != int64(n) || sum != sha256.Sum256(testkit.Payload(n, uint64(n)))) {
				err = fmt.Errorf("download of %d bytes: got %d, sum match %v", n, got, sum == sha256.Sum256(testkit.Payload(n, uint64(n))))
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	up := testkit.Payload(interopSize/2, 99)
	want := sha256.Sum256(up)
	resp, err := client.Post(base+"/upload", "application/octet-stream", io.MultiReader(bytes.NewReader(up)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(b) != fmt.Sprintf("%d %x", len(up), want) {
		t.Fatalf("upload answer %q, %v", b, err)
	}
	if got := resp.Trailer.Get("X-Sum"); got != fmt.Sprintf("%x", want) {
		t.Errorf("trailer %q", got)
	}

	req, _ := http.NewRequest(http.MethodGet, base+"/range", nil)
	req.Header.Set("Range", "bytes=100-299")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, testkit.Payload(1<<20, 42)[100:300]) {
		t.Fatalf("range: %d, %d bytes", resp.StatusCode, len(b))
	}
}

// TestQuicGoClient: quic-go's http3.Transport against this package's
// Server.
func TestQuicGoClient(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, interopHandler(t))
	tr := &qghttp3.Transport{TLSClientConfig: clientTLS()}
	defer tr.Close()
	runInteropClient(t, &http.Client{Transport: tr}, ts.url(""))
}

// TestQuicGoServer: this package's Transport against quic-go's
// http3.Server.
func TestQuicGoServer(t *testing.T) {
	testkit.CheckGoroutines(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &qghttp3.Server{Handler: interopHandler(t), TLSConfig: qghttp3.ConfigureTLSConfig(serverTLS())}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(udp)
	}()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
		_ = udp.Close()
		<-done
	}()
	tr := newTransport(t)
	base := fmt.Sprintf("https://localhost:%d", udp.LocalAddr().(*net.UDPAddr).Port)
	runInteropClient(t, &http.Client{Transport: tr}, base)
	tr.mu.Lock()
	n := len(tr.all)
	tr.mu.Unlock()
	if n != 1 {
		t.Errorf("%d connections", n)
	}
}
