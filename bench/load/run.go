package load

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// readBufferSize is each worker's body buffer: large enough that a body
// of a few tens of kB takes few reads.
const readBufferSize = 32 << 10

// Run sends the load that o describes and measures it. It returns an
// error, and no Result, when the options are wrong or the target cannot
// be resolved; failed requests are counted in the Result, not returned.
// When ctx ends, Run stops and returns what it measured so far, with
// ctx's error.
func Run(ctx context.Context, o Options) (*Result, error) {
	u, err := o.check()
	if err != nil {
		return nil, err
	}
	cl, err := newClient(ctx, u.Hostname(), u.Port(), &o)
	if err != nil {
		return nil, err
	}
	defer cl.close()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	r := &runner{o: &o, cl: cl, latencies: newLatencySink()}
	r.workers = make([]*worker, o.Workers)
	shared := make([]*http3.Transport, max(o.Conns, 1))
	if !o.NewConn {
		for i := range shared {
			shared[i] = cl.transport()
		}
	}
	for i := range r.workers {
		w := &worker{r: r, req: req, buf: make([]byte, readBufferSize), stats: newWorkerStats(r.latencies)}
		if o.NewConn {
			w.tr = cl.transport()
		} else {
			w.tr = shared[i%len(shared)]
		}
		r.workers[i] = w
	}
	if o.Warmup > 0 {
		r.phase(ctx, phaseSpec{duration: o.Warmup, warmup: true})
	}
	cl.conns.Store(0)
	cl.early.Store(0)
	if o.MeasureStart != nil {
		o.MeasureStart()
	}
	res := r.phase(ctx, phaseSpec{duration: o.Duration, requests: o.Requests})
	res.URL = u.String()
	res.Workers = o.Workers
	res.NewConn = o.NewConn
	if !o.NewConn {
		res.SharedConns = len(shared)
	}
	res.WarmupSeconds = o.Warmup.Seconds()
	return res, ctx.Err()
}

// client is what the workers share: one UDP socket for every connection,
// the resolved server address and the connection count.
type client struct {
	udp   *net.UDPConn
	qt    *quic.Transport
	addr  *net.UDPAddr
	tls   *tls.Config
	quic  *quic.Config
	conns atomic.Int64
	// early counts the connections dialed with a ticket that allows
	// 0-RTT (Options.Resume).
	early atomic.Int64

	mu  sync.Mutex
	trs []*http3.Transport
}

func newClient(ctx context.Context, host, port string, o *Options) (*client, error) {
	if port == "" {
		port = "443"
	}
	ip, err := resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	p, err := netip.ParseAddrPort(net.JoinHostPort(ip.String(), port))
	if err != nil {
		return nil, fmt.Errorf("load: %s: %w", host, err)
	}
	// A socket of the server's family, on every address, so that the
	// kernel picks the source address.
	network, local := "udp4", &net.UDPAddr{IP: net.IPv4zero}
	if !ip.Is4() {
		network, local = "udp6", &net.UDPAddr{IP: net.IPv6unspecified}
	}
	udp, err := net.ListenUDP(network, local)
	if err != nil {
		return nil, fmt.Errorf("load: client socket: %w", err)
	}
	tlsConf := &tls.Config{}
	if o.TLS != nil {
		tlsConf = o.TLS.Clone()
	}
	var quicConf quic.Config
	if o.QUIC != nil {
		quicConf = *o.QUIC
	}
	if quicConf.HandshakeTimeout == 0 {
		quicConf.HandshakeTimeout = o.timeout()
	}
	if o.Resume {
		// One server: its latest ticket and token serve every new
		// connection.
		if tlsConf.ClientSessionCache == nil {
			tlsConf.ClientSessionCache = tls.NewLRUClientSessionCache(resumeCacheSize)
		}
		if quicConf.TokenStore == nil {
			quicConf.TokenStore = quic.NewTokenCache(resumeCacheSize)
		}
	}
	return &client{
		udp: udp, qt: &quic.Transport{Conn: udp}, addr: net.UDPAddrFromAddrPort(p),
		tls: tlsConf, quic: &quicConf,
	}, nil
}

// resolve returns host's first address, preferring IPv4 as most servers
// on loopback listen there.
func resolve(ctx context.Context, host string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap(), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("load: resolving %s: %w", host, err)
	}
	if len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("load: resolving %s: no address", host)
	}
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return ip.Unmap(), nil
		}
	}
	return ips[0], nil
}

// resumeCacheSize is how many tickets and tokens Options.Resume keeps:
// the server's under the few names it may be dialed by.
const resumeCacheSize = 8

// dial is every Transport's Dial: all connections go through the one
// socket, and their dial errors are marked as such. A connection whose
// session cache holds a ticket that allows 0-RTT is dialed early, as
// http3.Transport's own dial does, so that its request goes in 0-RTT.
func (c *client) dial(ctx context.Context, _ string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error) {
	dial, early := c.qt.Dial, earlyDataTicket(tlsConf)
	if early {
		dial = c.qt.DialEarly
	}
	qc, err := dial(ctx, c.addr, tlsConf, conf)
	if err != nil {
		return nil, &connectError{err: err}
	}
	c.conns.Add(1)
	if early {
		c.early.Add(1)
	}
	return qc, nil
}

// earlyDataTicket reports whether tlsConf's session cache holds a ticket
// for its server that allows 0-RTT.
func earlyDataTicket(tlsConf *tls.Config) bool {
	if tlsConf.ClientSessionCache == nil {
		return false
	}
	cs, ok := tlsConf.ClientSessionCache.Get(tlsConf.ServerName)
	if !ok || cs == nil {
		return false
	}
	_, st, err := cs.ResumptionState()
	return err == nil && st != nil && st.EarlyData
}

// transport returns a new HTTP/3 Transport, which holds one connection at
// a time to the server.
func (c *client) transport() *http3.Transport {
	tr := &http3.Transport{
		TLSClientConfig: c.tls,
		QUICConfig:      c.quic,
		Dial:            c.dial,
		// The body is counted as sent, never inflated.
		DisableCompression: true,
	}
	c.mu.Lock()
	c.trs = append(c.trs, tr)
	c.mu.Unlock()
	return tr
}

func (c *client) close() {
	c.mu.Lock()
	trs := c.trs
	c.trs = nil
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, tr := range trs {
		wg.Go(func() { _ = tr.Close() })
	}
	wg.Wait()
	_ = c.qt.Close()
	_ = c.udp.Close()
}

func (o *Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return defaultTimeout
}

// runner runs the phases of a run over its workers.
type runner struct {
	o       *Options
	cl      *client
	workers []*worker
	// The latencies of the current phase's successful requests.
	latencies *latencySink

	// Counts of the current phase, for Progress.
	requests, errors, bytes atomic.Int64
}

type phaseSpec struct {
	duration time.Duration
	requests int
	warmup   bool
}

// phase runs every worker through one phase and merges their counts.
func (r *runner) phase(ctx context.Context, p phaseSpec) *Result {
	r.requests.Store(0)
	r.errors.Store(0)
	r.bytes.Store(0)
	for _, w := range r.workers {
		w.stats.reset()
	}
	r.latencies.reset()
	phaseCtx, cancel := ctx, context.CancelFunc(func() {})
	if p.duration > 0 {
		phaseCtx, cancel = context.WithTimeout(ctx, p.duration)
	}
	defer cancel()
	start := time.Now()
	stopProgress := r.progress(start, p.warmup)
	stopWatchdog := r.watchdog()
	defer stopWatchdog()
	var wg sync.WaitGroup
	for _, w := range r.workers {
		wg.Go(func() {
			w.loop(phaseCtx, p.requests)
			w.release()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if !p.warmup && r.o.MeasureEnd != nil {
		r.o.MeasureEnd()
	}
	stopProgress()
	if p.duration > 0 && elapsed > p.duration {
		// Requests cut off by the end were not counted; neither is the
		// time it took to cut them off.
		elapsed = p.duration
	}
	total := newStats()
	for _, w := range r.workers {
		w.stats.flush()
		total.merge(w.stats)
	}
	total.hist.Merge(r.latencies.hist)
	res := total.result(elapsed, r.cl.conns.Load())
	res.ConnectionsEarly = r.cl.early.Load()
	return res
}

// progress calls Options.Progress until the returned function is called.
func (r *runner) progress(start time.Time, warmup bool) func() {
	if r.o.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.o.Progress(Progress{
					Elapsed: time.Since(start), Requests: r.requests.Load(), Errors: r.errors.Load(),
					Bytes: r.bytes.Load(), Warmup: warmup,
				})
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// watchdog ends the requests that ran longer than Options.Timeout until
// the returned function is called. One goroutine looks at every worker's
// request an eighth of the timeout apart, so that a request cuts off
// between the timeout and 9/8 of it: a timer per request cost the
// generator more than the deadline was worth, on the processors it
// shares with the server it measures.
func (r *runner) watchdog() func() {
	timeout := r.o.timeout()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(timeout/8, time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				for _, w := range r.workers {
					w.expire(now, timeout)
				}
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// worker sends one request at a time.
type worker struct {
	r     *runner
	tr    *http3.Transport
	req   *http.Request
	buf   []byte
	stats *stats

	// mu guards the requests' context and the request under way, for
	// the watchdog. The worker's requests share one context, a child of
	// the phase's, until the watchdog ends it for a request that took
	// too long: a context of its own for each request (with the
	// Transport's watch on it) cost the generator a tenth of its
	// processor time, much of it on the lock of the phase's context,
	// which every worker's requests would share.
	mu      sync.Mutex
	parent  context.Context         // the phase's context that ctx derives from
	ctx     context.Context         // the requests' context
	cancel  context.CancelCauseFunc // nil once ctx ended
	withCtx *http.Request           // req with ctx
	busy    bool                    // a request is under way
	started time.Time               // when it started
}

// begin returns the request that starts now, with the worker's context,
// made anew for a new phase or after the watchdog ended the last one.
func (w *worker) begin(phase context.Context, now time.Time) *http.Request {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel == nil || w.parent != phase {
		if w.cancel != nil {
			w.cancel(nil)
		}
		w.parent = phase
		w.ctx, w.cancel = context.WithCancelCause(phase)
		w.withCtx = w.req.WithContext(w.ctx)
	}
	w.busy, w.started = true, now
	return w.withCtx
}

// end marks the request over.
func (w *worker) end() {
	w.mu.Lock()
	w.busy = false
	w.mu.Unlock()
}

// release ends the worker's context when its phase ended.
func (w *worker) release() {
	w.mu.Lock()
	cancel := w.cancel
	w.cancel, w.parent, w.ctx, w.withCtx = nil, nil, nil, nil
	w.mu.Unlock()
	if cancel != nil {
		cancel(nil)
	}
}

// expire ends the request under way if it started timeout ago or more:
// the worker's context ends with errRequestTimeout as its cause, and the
// next request gets a new one.
func (w *worker) expire(now time.Time, timeout time.Duration) {
	w.mu.Lock()
	cancel := w.cancel
	if !w.busy || cancel == nil || now.Sub(w.started) < timeout {
		w.mu.Unlock()
		return
	}
	w.cancel = nil
	w.mu.Unlock()
	cancel(errRequestTimeout)
}

// loop sends requests until ctx ends or, if n > 0, n requests are done.
func (w *worker) loop(ctx context.Context, n int) {
	for i := 0; (n == 0 || i < n) && ctx.Err() == nil; i++ {
		w.one(ctx)
	}
}

// one sends one request and records its outcome, unless the end of the
// phase cut it off.
func (w *worker) one(ctx context.Context) {
	o := w.r.o
	start := time.Now()
	req := w.begin(ctx, start)
	rctx := req.Context()
	n, err := w.get(req)
	lat := time.Since(start)
	if err != nil && ctx.Err() != nil && context.Cause(rctx) != errRequestTimeout {
		// The run ended, not the request.
		w.end()
		w.stats.cut++
		// Its bytes moved within the measured time: the transfer rate
		// counts them (a response larger than the run would otherwise
		// show 0 B/s while it streams).
		w.stats.bytes += n
		return
	}
	kind := ""
	if err != nil {
		kind = classify(rctx, err)
	}
	w.end()
	if o.NewConn {
		w.tr.CloseIdleConnections()
	}
	w.r.requests.Add(1)
	if err != nil {
		w.r.errors.Add(1)
	}
	w.stats.record(lat, n, kind, err)
}

// errStatus is a response whose status is not 2xx.
type errStatus struct{ code int }

func (e *errStatus) Error() string { return fmt.Sprintf("HTTP status %d", e.code) }

// get sends the request and reads the whole body, returning the body's
// length.
func (w *worker) get(req *http.Request) (int64, error) {
	resp, err := w.tr.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	n, err := w.drain(resp)
	resp.Body.Close()
	if err != nil {
		return n, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return n, &errStatus{code: resp.StatusCode}
	}
	return n, nil
}

// drain reads the body into the worker's buffer and checks it.
func (w *worker) drain(resp *http.Response) (int64, error) {
	expect := w.r.o.ExpectBody
	check := expect != nil && resp.StatusCode >= 200 && resp.StatusCode <= 299
	var n int64
	for {
		k, err := resp.Body.Read(w.buf)
		if k > 0 {
			if check {
				if n+int64(k) > int64(len(expect)) {
					return n + int64(k), &errBodyMismatch{msg: fmt.Sprintf("longer than the expected %d bytes", len(expect))}
				}
				if !bytes.Equal(w.buf[:k], expect[n:n+int64(k)]) {
					return n + int64(k), &errBodyMismatch{msg: fmt.Sprintf("bytes %d to %d differ from the expected body", n, n+int64(k))}
				}
			}
			n += int64(k)
			w.r.bytes.Add(int64(k))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, &errBodyMismatch{msg: fmt.Sprintf("%d bytes, content-length %d", n, resp.ContentLength)}
	}
	if check && n != int64(len(expect)) {
		return n, &errBodyMismatch{msg: fmt.Sprintf("%d bytes, expected %d", n, len(expect))}
	}
	return n, nil
}
