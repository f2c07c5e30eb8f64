package load

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/bench/load/payload"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

func TestRunCounts(t *testing.T) {
	base := serve(t, payload.Handler())
	const workers, perWorker, size = 8, 5, 1024
	res, err := Run(context.Background(), Options{
		URL: base + payload.Prefix + "1024", Workers: workers, Requests: perWorker,
		TLS: clientTLS(t), ExpectBody: payload.Body(size),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != workers*perWorker || res.Succeeded != res.Requests || res.Errors != 0 {
		t.Fatalf("requests %d, succeeded %d, errors %d %v; want %d, all good", res.Requests, res.Succeeded,
			res.Errors, res.ErrorExamples, workers*perWorker)
	}
	if res.Bytes != workers*perWorker*size {
		t.Errorf("bytes %d, want %d", res.Bytes, workers*perWorker*size)
	}
	if res.Connections != 1 || res.SharedConns != 1 {
		t.Errorf("%d connections opened, %d shared; want 1 and 1", res.Connections, res.SharedConns)
	}
	if res.LatencySamples != res.Succeeded {
		t.Errorf("%d latency samples for %d successes", res.LatencySamples, res.Succeeded)
	}
	l := res.LatencyMs
	if !(l.Min > 0 && l.Min <= l.P50 && l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max*1.001) {
		t.Errorf("latencies out of order: %+v", l)
	}
	if res.RequestsPerSecond <= 0 || res.Seconds <= 0 || res.Mbps <= 0 {
		t.Errorf("rates: %.1f req/s in %.3f s, %.3f Mbit/s", res.RequestsPerSecond, res.Seconds, res.Mbps)
	}
}

func TestRunSharedConns(t *testing.T) {
	base := serve(t, payload.Handler())
	res, err := Run(context.Background(), Options{
		URL: base + payload.Prefix + "30", Workers: 6, Requests: 4, Conns: 3, TLS: clientTLS(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 24 || res.Connections != 3 || res.SharedConns != 3 {
		t.Fatalf("%d succeeded over %d connections (%d shared); want 24 over 3", res.Succeeded, res.Connections, res.SharedConns)
	}
}

func TestRunNewConn(t *testing.T) {
	base := serve(t, payload.Handler())
	res, err := Run(context.Background(), Options{
		URL: base + payload.Prefix + "30", Workers: 3, Requests: 4, NewConn: true, TLS: clientTLS(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Succeeded != 12 || res.Connections != 12 || res.ConnectionsPerSecond <= 0 {
		t.Fatalf("%d succeeded, %d connections (%.1f/s); want 12 and 12: %v", res.Succeeded, res.Connections,
			res.ConnectionsPerSecond, res.ErrorExamples)
	}
	if res.SharedConns != 0 || !res.NewConn {
		t.Errorf("new_conn %v with %d shared connections", res.NewConn, res.SharedConns)
	}
}

func TestRunDurationAndWarmup(t *testing.T) {
	base := serve(t, payload.Handler())
	var calls, warm, starts, ends int
	res, err := Run(context.Background(), Options{
		MeasureStart: func() {
			if warm == 0 || calls != warm {
				t.Errorf("the measured part starts after %d progress calls, %d of them in the warm-up", calls, warm)
			}
			starts++
		},
		MeasureEnd: func() { ends++ },
		URL:        base + payload.Prefix + "100", Workers: 4, Duration: 600 * time.Millisecond, Warmup: 600 * time.Millisecond,
		TLS: clientTLS(t),
		// Progress runs on one goroutine of Run's: no lock needed.
		Progress: func(p Progress) {
			calls++
			if p.Warmup {
				warm++
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Seconds != 0.6 {
		t.Errorf("measured %.3f s, want the duration 0.6 s", res.Seconds)
	}
	if res.Succeeded == 0 || res.Errors != 0 {
		t.Errorf("%d succeeded, %d errors %v", res.Succeeded, res.Errors, res.ErrorExamples)
	}
	// The warm-up opened the connection; the measured part opened none.
	if res.Connections != 0 || res.ConnectionsPerSecond != 0 {
		t.Errorf("%d connections opened after the warm-up", res.Connections)
	}
	if starts != 1 || ends != 1 {
		t.Errorf("MeasureStart called %d times, MeasureEnd %d; want once each", starts, ends)
	}
	if res.Unfinished > 4 {
		t.Errorf("%d requests cut off by the end, more than the 4 workers", res.Unfinished)
	}
	if calls < 2 || warm == 0 || warm == calls {
		t.Errorf("progress: %d calls, %d in the warm-up", calls, warm)
	}
}

func TestRunErrorKinds(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle(payload.Prefix, payload.Handler())
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write(make([]byte, 100))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	base := serve(t, mux)
	for _, tc := range []struct {
		name, path string
		kind       string
		o          Options
	}{
		{"404", "/nothing", "status_404", Options{}},
		{"reset", "/reset", KindStreamReset, Options{}},
		{"mismatch", payload.Prefix + "64", KindBodyMismatch, Options{ExpectBody: make([]byte, 64)}},
		{"short", payload.Prefix + "64", KindBodyMismatch, Options{ExpectBody: payload.Body(65)}},
		{"timeout", "/slow", KindTimeout, Options{Timeout: 200 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.URL, o.Workers, o.Requests, o.TLS = base+tc.path, 2, 2, clientTLS(t)
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Errors != 4 || res.ErrorsByKind[tc.kind] != 4 || res.Succeeded != 0 {
				t.Fatalf("errors %d by kind %v (%v), succeeded %d; want 4 of kind %s", res.Errors, res.ErrorsByKind,
					res.ErrorExamples, res.Succeeded, tc.kind)
			}
			if res.ErrorExamples[tc.kind] == "" || res.LatencySamples != 0 || res.RequestsPerSecond != 0 {
				t.Errorf("example %q, %d latency samples, %.1f req/s", res.ErrorExamples[tc.kind], res.LatencySamples, res.RequestsPerSecond)
			}
		})
	}
}

func TestRunConnectError(t *testing.T) {
	// A port with nothing behind it: the handshake times out.
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	res, err := Run(context.Background(), Options{
		URL: "https://" + addr + "/", Workers: 2, Requests: 1, NewConn: true, TLS: clientTLS(t),
		QUIC: &quic.Config{HandshakeTimeout: 150 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorsByKind[KindConnect] != 2 || res.Connections != 0 {
		t.Fatalf("errors %v (%v), %d connections; want 2 connect errors", res.ErrorsByKind, res.ErrorExamples, res.Connections)
	}
}

func TestRunDeadServerDuration(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	// Handshakes outlast the run: nothing ends, all is cut off.
	res, err := Run(context.Background(), Options{
		URL: "https://" + addr + "/", Workers: 3, Duration: 200 * time.Millisecond, TLS: clientTLS(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 || res.Unfinished != 3 {
		t.Fatalf("%d requests ended, %d cut off; want 0 and 3", res.Requests, res.Unfinished)
	}
}

func TestRunCertificateError(t *testing.T) {
	base := serve(t, payload.Handler())
	// No trusted root: the handshake fails.
	res, err := Run(context.Background(), Options{URL: base + "/bytes/1", Workers: 1, Requests: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorsByKind[KindConnect] != 2 {
		t.Fatalf("errors %v (%v); want 2 connect errors", res.ErrorsByKind, res.ErrorExamples)
	}
}

func TestRunCanceled(t *testing.T) {
	base := serve(t, payload.Handler())
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Options{URL: base + "/bytes/10", Workers: 2, Requests: 1 << 30, TLS: clientTLS(t)})
	if err == nil || res == nil || res.Succeeded == 0 {
		t.Fatalf("Run after cancel: %v, %+v; want the context's error and the counts so far", err, res)
	}
}

func TestResultJSONContract(t *testing.T) {
	base := serve(t, payload.Handler())
	res, err := Run(context.Background(), Options{URL: base + "/bytes/30", Workers: 2, Requests: 3, TLS: clientTLS(t)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"requests_per_second", "connections_per_second", "errors", "latency_ms", "errors_by_kind"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if rps, _ := m["requests_per_second"].(float64); rps <= 0 {
		t.Errorf("requests_per_second = %v", m["requests_per_second"])
	}
	lat, _ := m["latency_ms"].(map[string]any)
	for _, k := range []string{"p50", "p90", "p99", "p999"} {
		if v, ok := lat[k].(float64); !ok || v <= 0 {
			t.Errorf("latency_ms.%s = %v", k, lat[k])
		}
	}
	var text strings.Builder
	if err := res.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"requests/s", "connections/s", "p99.9", "errors        none"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestOptionsCheck(t *testing.T) {
	ok := Options{URL: "https://localhost:4433/", Workers: 1, Requests: 1}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"no url", func(o *Options) { o.URL = "" }, "no URL"},
		{"http", func(o *Options) { o.URL = "http://localhost/" }, "https"},
		{"no host", func(o *Options) { o.URL = "https:///x" }, "no host"},
		{"port", func(o *Options) { o.URL = "https://localhost:0/" }, "port"},
		{"bad url", func(o *Options) { o.URL = "https://[::1/" }, "load:"},
		{"user", func(o *Options) { o.URL = "https://a:b@localhost/" }, "credentials"},
		{"workers", func(o *Options) { o.Workers = 0 }, "workers"},
		{"both", func(o *Options) { o.Duration = time.Second }, "either"},
		{"neither", func(o *Options) { o.Requests = 0 }, "either"},
		{"negative", func(o *Options) { o.Timeout = -1 }, "negative"},
		{"conns", func(o *Options) { o.Conns = 2 }, "unused"},
		{"new conn", func(o *Options) { o.Workers, o.Conns, o.NewConn = 4, 2, true }, "exclude"},
	} {
		o := ok
		tc.edit(&o)
		_, err := Run(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"https://localhost:4433/bytes/30", "https://[::1]:443/", "http://x/", "https://:1/", "https://h:99999/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURL(s)
		if err != nil {
			return
		}
		if u.Scheme != "https" || u.Hostname() == "" {
			t.Fatalf("ParseURL(%q) accepted %v", s, u)
		}
	})
}

func TestClassify(t *testing.T) {
	ctx := context.Background()
	timedOut, cancel := context.WithTimeoutCause(ctx, 0, errRequestTimeout)
	defer cancel()
	<-timedOut.Done()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		want string
	}{
		{ctx, &connectError{err: errors.New("x")}, KindConnect},
		{ctx, &quic.TransportError{Remote: true, ErrorCode: connectionRefused}, KindConnect},
		{ctx, &quic.TransportError{Remote: true, ErrorCode: 0x0a}, KindConnClosed},
		{ctx, &quic.ApplicationError{Remote: true}, KindConnClosed},
		{ctx, &quic.StatelessResetError{}, KindConnClosed},
		{ctx, &quic.IdleTimeoutError{}, KindTimeout},
		{timedOut, context.DeadlineExceeded, KindTimeout},
		{ctx, &quic.StreamError{Remote: true}, KindStreamReset},
		{ctx, &http3.Error{Code: http3.ErrCodeMessageError}, KindBodyMismatch},
		{ctx, &http3.Error{Code: http3.ErrCodeInternalError, Remote: true}, KindStreamReset},
		{ctx, &http3.Error{Code: http3.ErrCodeFrameError, Connection: true}, KindConnClosed},
		{ctx, &errStatus{code: 503}, "status_503"},
		{ctx, fmt.Errorf("wrapped: %w", &errBodyMismatch{msg: "x"}), KindBodyMismatch},
		{ctx, errors.New("mystery"), KindOther},
	} {
		if got := classify(c.ctx, c.err); got != c.want {
			t.Errorf("classify(%v) = %s, want %s", c.err, got, c.want)
		}
	}
}

// TestRunNewConnResumes: with Resume, each new connection after the first
// resumes the session the server's last ticket holds and, the server
// allowing 0-RTT, is dialed in 0-RTT; without it every connection makes a
// full handshake.
func TestRunNewConnResumes(t *testing.T) {
	var resumed atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && r.TLS.DidResume {
			resumed.Add(1)
		}
		_, _ = w.Write([]byte("ok"))
	})
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &http3.Server{Handler: h, TLSConfig: http3.ConfigureTLS(&tls.Config{Certificates: []tls.Certificate{cert(t)}}),
		QUICConfig: &quic.Config{Allow0RTT: true}}
	l, err := s.Listen(udp)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(l) }()
	defer s.Close()
	url := fmt.Sprintf("https://127.0.0.1:%d/", udp.LocalAddr().(*net.UDPAddr).Port)
	for _, resume := range []bool{false, true} {
		resumed.Store(0)
		res, err := Run(context.Background(), Options{URL: url, Workers: 1, Requests: 5, NewConn: true, Resume: resume, TLS: clientTLS(t)})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(0)
		if resume {
			want = 4
		}
		if res.Succeeded != 5 || res.Connections != 5 || resumed.Load() != want || res.ConnectionsEarly != want {
			t.Errorf("resume %v: %d succeeded over %d connections, %d resumed, %d in 0-RTT; want 5, 5, %d and %d: %v",
				resume, res.Succeeded, res.Connections, resumed.Load(), res.ConnectionsEarly, want, want, res.ErrorExamples)
		}
	}
}

// TestRunTimeoutThenSuccess: a request the watchdog cuts off ends the
// worker's context, and the worker's next requests get a new one: after
// one timeout, the others succeed. The cut-off comes between Timeout and
// 9/8 of it (with room for a busy machine).
func TestRunTimeoutThenSuccess(t *testing.T) {
	var n atomic.Int64
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done()
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	const timeout = 300 * time.Millisecond
	start := time.Now()
	res, err := Run(context.Background(), Options{
		URL: base + "/", Workers: 1, Requests: 3, Timeout: timeout, TLS: clientTLS(t),
	})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if res.ErrorsByKind[KindTimeout] != 1 || res.Errors != 1 || res.Succeeded != 2 {
		t.Fatalf("errors %v (%v), succeeded %d; want one timeout, then two successes", res.ErrorsByKind, res.ErrorExamples, res.Succeeded)
	}
	if took < timeout || took > timeout*9/8+3*time.Second {
		t.Errorf("the run took %v, want from %v to 9/8 of it and the two quick requests", took, timeout)
	}
}

// TestLatencySinkBatches: latencies recorded by several workers in
// batches through one sink, flushed at the end, give the histogram one
// worker recording each directly would.
func TestLatencySinkBatches(t *testing.T) {
	sink := newLatencySink()
	workers := []*stats{newWorkerStats(sink), newWorkerStats(sink), newWorkerStats(sink)}
	direct := newStats()
	for i := range 1000 {
		lat := time.Duration(i*i%7919+1) * time.Microsecond
		workers[i%len(workers)].record(lat, 1, "", nil)
		direct.record(lat, 1, "", nil)
	}
	total := newStats()
	for _, w := range workers {
		w.flush()
		total.merge(w)
	}
	total.hist.Merge(sink.hist)
	if total.ok != 1000 || total.bytes != 1000 {
		t.Fatalf("%d successes, %d bytes", total.ok, total.bytes)
	}
	if got, want := latencyOf(total.hist), latencyOf(direct.hist); got != want {
		t.Fatalf("latencies %+v, want %+v", got, want)
	}
}
