//go:build linux

package tunnelbench

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/satquic/satquic/bench"
)

// side runs functions inside one network namespace (emulate.Namespaces.Do
// or inNamespace): sockets they open live there.
type side func(fn func() error) error

// httpPort is the inner HTTP server's TCP port.
const httpPort = 8080

// requestTimeout bounds one request: a response that takes longer counts
// as failed, at this time, and the run goes on.
const requestTimeout = time.Minute

// httpServer is net/http's server in the server's namespace, plain HTTP/1.1:
// the programs are the unmodified applications a tunnel carries, and the
// tunnel (or nothing, for the direct stack) is all that protects them.
type httpServer struct {
	srv  *http.Server
	addr string
	done chan struct{}
}

// socketControl prepares the inner TCP's sockets before they connect or
// listen (innerControl: their congestion control), or is nil.
type socketControl func(network, address string, c syscall.RawConn) error

func startHTTPServer(ns side, addr netip.Addr, control socketControl) (*httpServer, error) {
	var ln net.Listener
	lc := net.ListenConfig{Control: control}
	err := ns(func() (err error) {
		ln, err = lc.Listen(context.Background(), "tcp4", netip.AddrPortFrom(addr, httpPort).String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("HTTP server: %w", err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	h := &httpServer{
		srv: &http.Server{
			Handler: bench.BytesHandler(), Protocols: &protos,
			ReadHeaderTimeout: time.Minute,
			ErrorLog:          log.New(io.Discard, "", 0),
		},
		addr: ln.Addr().String(),
		done: make(chan struct{}),
	}
	go func() {
		defer close(h.done)
		_ = h.srv.Serve(ln)
	}()
	return h, nil
}

func (h *httpServer) close() {
	_ = h.srv.Close()
	<-h.done
}

// flow is one kept-alive HTTP/1.1 connection from the client's namespace,
// as one of wrk's connections.
type flow struct {
	client *http.Client
	tr     *http.Transport
}

func newFlow(ns side, control socketControl) *flow {
	d := net.Dialer{Control: control}
	var protos http.Protocols
	protos.SetHTTP1(true)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var c net.Conn
			err := ns(func() (err error) {
				c, err = d.DialContext(ctx, network, addr)
				return err
			})
			return c, err
		},
		Protocols:           &protos,
		MaxConnsPerHost:     1,
		MaxIdleConnsPerHost: 1,
		DisableCompression:  true,
		ReadBufferSize:      64 << 10,
	}
	return &flow{client: &http.Client{Transport: tr}, tr: tr}
}

// get fetches size bytes from addr and returns when it started and the
// time it took.
func (f *flow) get(ctx context.Context, addr string, size int64) (time.Time, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	u := "http://" + addr + bench.BytesPath + fmt.Sprintf("?n=%d", size)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return time.Time{}, 0, err
	}
	start := time.Now()
	_, err = bench.FetchBytes(f.client, req, size)
	return start, time.Since(start), err
}

// request is one recorded request: its connection, when it started and
// how long it took.
type request struct {
	flow  int
	start time.Time
	took  time.Duration
}

// batch is the outcome of the requests of one size.
type batch struct {
	times    []float64 // seconds, failed requests at requestTimeout
	requests []request // the same requests, in the order they ended
	failed   int
	payload  int64 // response bytes received, warm-up included
	firstErr error
	gaveUp   bool // failureLimit failures ended the batch early
}

// failureLimit is the number of failed requests that ends a batch of n.
func failureLimit(n int) int { return max(10, n/20) }

// runBatch opens parallel flows, warms each up with one request of size
// (so that the recorded requests ride kept-alive connections, as wrk's
// do), then sends n requests of size over them, each flow waiting gap
// between a response and its next request.
func runBatch(ctx context.Context, ns side, control socketControl, addr string, size int64, n, parallel int, gap time.Duration, progress func(done int)) batch {
	var (
		mu   sync.Mutex
		b    batch
		next int
		wg   sync.WaitGroup
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	record := func(flow int, start time.Time, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			b.failed++
			if b.failed >= failureLimit(n) {
				// The path is broken (the tunnel stopped forwarding):
				// waiting out a timeout for each of the requests left
				// would only delay the error.
				b.gaveUp = true
				cancel()
			}
			if b.firstErr == nil {
				b.firstErr = err
			}
			d = max(d, requestTimeout)
		} else {
			b.payload += size
		}
		b.times = append(b.times, d.Seconds())
		b.requests = append(b.requests, request{flow: flow, start: start, took: d})
		if progress != nil {
			progress(len(b.times))
		}
	}
	take := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || ctx.Err() != nil {
			return false
		}
		next++
		return true
	}
	for i := range parallel {
		wg.Go(func() {
			f := newFlow(ns, control)
			defer f.tr.CloseIdleConnections()
			if _, _, err := f.get(ctx, addr, size); err == nil {
				mu.Lock()
				b.payload += size
				mu.Unlock()
			}
			for take() {
				start, d, err := f.get(ctx, addr, size)
				record(i, start, d, err)
				if gap > 0 {
					select {
					case <-time.After(gap):
					case <-ctx.Done():
					}
				}
			}
		})
	}
	wg.Wait()
	return b
}
