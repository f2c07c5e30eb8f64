package http3

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	qghttp3 "github.com/quic-go/quic-go/http3"
	"github.com/satquic/satquic/internal/testkit"
)

// BenchmarkRequests measures requests per second with 50 requests under
// way at once, for 30 B and 10 kB responses, over one shared connection
// and over a new connection per request, for this package and for
// quic-go's HTTP/3 (client and server of the same stack) in the same run:
//
//	go test -run '^$' -bench Requests -benchtime 3s ./http3
func BenchmarkRequests(b *testing.B) {
	const concurrency = 50
	for _, size := range []int{30, 10_000} {
		body := testkit.Payload(size, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
		for _, mode := range []string{"one-conn", "new-conn"} {
			for _, stack := range []string{"satquic", "quic-go"} {
				name := fmt.Sprintf("%dB/%s/%s", size, mode, stack)
				b.Run(name, func(b *testing.B) {
					url, stop := benchServer(b, stack, h)
					defer stop()
					newRT := func() (http.RoundTripper, func()) {
						if stack == "satquic" {
							tr := &Transport{TLSClientConfig: clientTLS()}
							return tr, func() { _ = tr.Close() }
						}
						tr := &qghttp3.Transport{TLSClientConfig: clientTLS()}
						return tr, func() { _ = tr.Close() }
					}
					shared, closeShared := newRT()
					defer closeShared()
					// Warm up: the shared connection, the server's pools.
					if err := benchGet(shared, url, size); err != nil {
						b.Fatal(err)
					}
					var next atomic.Int64
					var wg sync.WaitGroup
					errs := make(chan error, concurrency)
					b.ResetTimer()
					start := time.Now()
					for range concurrency {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for next.Add(1) <= int64(b.N) {
								rt := shared
								closeRT := func() {}
								if mode == "new-conn" {
									rt, closeRT = newRT()
								}
								err := benchGet(rt, url, size)
								closeRT()
								if err != nil {
									errs <- err
									return
								}
							}
						}()
					}
					wg.Wait()
					elapsed := time.Since(start)
					b.StopTimer()
					close(errs)
					for err := range errs {
						b.Fatal(err)
					}
					b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
					b.ReportMetric(0, "ns/op")
				})
			}
		}
	}
}

func benchGet(rt http.RoundTripper, url string, size int) error {
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && (n != int64(size) || resp.StatusCode != 200) {
		err = fmt.Errorf("status %d, %d bytes", resp.StatusCode, n)
	}
	return err
}

// benchServer serves h with the stack's server on a loopback socket.
func benchServer(b *testing.B, stack string, h http.Handler) (url string, stop func()) {
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		b.Fatal(err)
	}
	url = fmt.Sprintf("https://localhost:%d/", udp.LocalAddr().(*net.UDPAddr).Port)
	done := make(chan struct{})
	if stack == "satquic" {
		s := &Server{Handler: h, TLSConfig: serverTLS()}
		l, err := s.Listen(udp)
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer close(done)
			_ = s.Serve(l)
		}()
		return url, func() {
			_ = s.Close()
			<-done
		}
	}
	s := &qghttp3.Server{Handler: h, TLSConfig: qghttp3.ConfigureTLSConfig(serverTLS())}
	go func() {
		defer close(done)
		_ = s.Serve(udp)
	}()
	return url, func() {
		_ = s.Close()
		_ = udp.Close()
		<-done
	}
}
