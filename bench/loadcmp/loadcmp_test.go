package loadcmp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	qghttp3 "github.com/quic-go/quic-go/http3"

	"github.com/satquic/satquic/bench/load"
	"github.com/satquic/satquic/bench/load/payload"
	"github.com/satquic/satquic/http3"
)

// childEnv makes the test binary a load server that speaks the child
// protocol of ProcessServer, so that the process side runs for real.
const childEnv = "LOADCMP_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "serve":
		os.Exit(childServe(os.Args[1:]))
	case "mute":
		// Never announces anything.
		time.Sleep(time.Minute)
		os.Exit(0)
	case "garbage":
		fmt.Println("hello")
		time.Sleep(time.Minute)
		os.Exit(0)
	case "fail":
		fmt.Fprintln(os.Stderr, "cannot bind")
		os.Exit(3)
	}
}

// childServe serves the payloads with satquic's HTTP/3 on --addr until
// SIGTERM, like "satquic bench load-server".
func childServe(args []string) int {
	var addr, certFile, keyFile string
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--addr":
			addr = args[i+1]
		case "--cert":
			certFile = args[i+1]
		case "--key":
			keyFile = args[i+1]
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	udpAddr, _ := net.ResolveUDPAddr("udp", addr)
	udp, err := net.ListenUDP("udp", udpAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM)
	s := &http3.Server{Handler: payload.Handler(), TLSConfig: http3.ConfigureTLS(&tls.Config{Certificates: []tls.Certificate{cert}})}
	l, err := s.Listen(udp)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go func() { _ = s.Serve(l) }()
	b, _ := json.Marshal(map[string]string{"listening": udp.LocalAddr().String()})
	fmt.Println(string(b))
	<-sig
	_ = s.Close()
	return 0
}

// childServer runs the test binary as a child server in the given mode.
func childServer(t *testing.T, stack, mode string) *ProcessServer {
	t.Setenv(childEnv, mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &ProcessServer{Stack: stack, Argv: []string{exe}}
}

// quicgoServer runs quic-go's HTTP/3 server in the test process.
type quicgoServer struct{}

func (quicgoServer) Name() string { return "quic-go" }

// inProcess is a server in the test process, which cannot be metered.
type inProcess struct {
	addr string
	stop func() error
}

func (p inProcess) Addr() string                   { return p.addr }
func (p inProcess) Stop() error                    { return p.stop() }
func (p inProcess) CPUTime() (time.Duration, bool) { return 0, false }

func (quicgoServer) Start(_ context.Context, certs Certs) (Instance, error) {
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, err
	}
	s := &qghttp3.Server{Handler: payload.Handler(), TLSConfig: qghttp3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{certs.TLS}})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(udp)
	}()
	return inProcess{addr: udp.LocalAddr().String(), stop: func() error {
		err := s.Close()
		_ = udp.Close()
		<-done
		return err
	}}, nil
}

func TestRunSideBySide(t *testing.T) {
	certs, err := WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	cfg := Config{
		Servers:  []Server{childServer(t, "satquic", "serve"), quicgoServer{}},
		Payloads: []int64{30, 5120}, Workers: 4, Conns: 2, Duration: 150 * time.Millisecond, Warmup: 50 * time.Millisecond,
		Runs: 2, NewConn: true, Progress: &progress,
	}
	samples, err := Run(context.Background(), cfg, certs)
	if err != nil {
		t.Fatal(err)
	}
	// 2 runs x (2 payloads + new connections) x 2 stacks.
	if len(samples) != 12 || strings.Count(progress.String(), "\n") != 12 {
		t.Fatalf("%d samples, progress:\n%s", len(samples), progress.String())
	}
	metered := 0
	for _, s := range samples {
		if s.Result.Errors != 0 || s.Rate() <= 0 {
			t.Errorf("%s: %+v", describe(s), s.Result.ErrorExamples)
		}
		if s.Measure == MeasureRequests && s.Result.SharedConns != 2 {
			t.Errorf("%s: %d shared connections, want 2", describe(s), s.Result.SharedConns)
		}
		if s.ServerCPUSeconds > 0 {
			metered++
			if s.Stack != "satquic" || s.CPUPerOp() <= 0 {
				t.Errorf("%s: metered %v s", describe(s), s.ServerCPUSeconds)
			}
		}
	}
	// The child process is metered (a run too short to take a tick of
	// CPU may read 0); the in-process server never is.
	if metered == 0 {
		t.Error("no measurement of the child server's CPU")
	}
	// The stacks alternate: each goes first in some measurement.
	if samples[0].Stack == samples[2].Stack {
		t.Errorf("the same stack went first twice: %s, %s", samples[0].Stack, samples[2].Stack)
	}
	m := NewMetadata(cfg, "test", map[string]string{"quic-go": "v0.0.0"}, []string{"x"})
	doc := NewDocument(m, samples)
	if len(doc.Results) != 6 {
		t.Fatalf("%d summaries, want 6: %+v", len(doc.Results), doc.Results)
	}
	r0 := doc.Results[0]
	if r0.Measure != MeasureRequests || r0.PayloadBytes != 30 || r0.Stack != "satquic" || r0.Runs != 2 ||
		!(r0.Min <= r0.Median && r0.Median <= r0.Max) {
		t.Errorf("first summary %+v", r0)
	}
	if last := doc.Results[5]; last.Measure != MeasureConnections || last.Stack != "quic-go" {
		t.Errorf("last summary %+v", last)
	}
	var text bytes.Buffer
	if err := doc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"satquic/quic-go", "new connections/s", "5 KiB", "quic-go v0.0.0", "setup:"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := doc.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Metadata map[string]any   `json:"metadata"`
		Runs     []map[string]any `json:"runs"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"satquic_version", "go_version", "stack_versions", "machine", "setup", "concurrency"} {
		if _, ok := back.Metadata[k]; !ok {
			t.Errorf("metadata lacks %q", k)
		}
	}
	if len(back.Runs) != 12 {
		t.Errorf("%d runs in the JSON", len(back.Runs))
	}
	var csvOut bytes.Buffer
	if err := doc.RunsTable().WriteCSV(&csvOut); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil || len(rows) != 13 {
		t.Errorf("CSV: %d rows, %v", len(rows), err)
	}
}

func TestProcessServerFailures(t *testing.T) {
	certs, err := WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode, want string
	}{
		{"fail", "cannot bind"},
		{"garbage", `announcement "hello"`},
	} {
		_, err := childServer(t, "x", c.mode).Start(context.Background(), certs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.mode, err, c.want)
		}
	}
	// A server that never announces is given up when the context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = childServer(t, "x", "mute").Start(ctx, certs)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Errorf("mute server: %v after %v", err, time.Since(start))
	}
	if _, err := (&ProcessServer{Stack: "x", Argv: []string{"/no/such/program"}}).Start(context.Background(), certs); err == nil {
		t.Error("a missing program started")
	}
}

func TestConfigCheck(t *testing.T) {
	ok := Config{Servers: []Server{quicgoServer{}}, Payloads: []int64{1}, Workers: 1, Duration: time.Second, Runs: 1}
	for _, c := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Servers = nil }, "no server"},
		{func(c *Config) { c.Servers = []Server{quicgoServer{}, quicgoServer{}} }, "twice"},
		{func(c *Config) { c.Payloads = nil }, "no payload"},
		{func(c *Config) { c.Payloads = []int64{-1} }, "out of range"},
		{func(c *Config) { c.Workers = 0 }, "workers"},
		{func(c *Config) { c.Conns = 2 }, "connections"},
		{func(c *Config) { c.Duration = 0 }, "duration"},
		{func(c *Config) { c.Warmup = -1 }, "warm-up"},
		{func(c *Config) { c.Runs = 0 }, "runs"},
	} {
		cfg := ok
		c.edit(&cfg)
		if _, err := Run(context.Background(), cfg, Certs{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want an error with %q", err, c.want)
		}
	}
}

func TestFormatPayload(t *testing.T) {
	for n, want := range map[int64]string{30: "30 B", 1000: "1000 B", 1024: "1 KiB", 10240: "10 KiB", 3 << 20: "3 MiB"} {
		if got := FormatPayload(n); got != want {
			t.Errorf("FormatPayload(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestComparisonsPairRuns(t *testing.T) {
	res := func(rps float64, ok int64) *load.Result {
		return &load.Result{RequestsPerSecond: rps, Succeeded: ok}
	}
	var samples []Sample
	// The medians of the rates say 1200/1100 = 1.09x; the pairs say
	// 3, 0.909 and 0.6: a median of 0.909x.
	for i, r := range []struct{ a, b float64 }{{3000, 1000}, {1000, 1100}, {1200, 2000}} {
		samples = append(samples,
			Sample{Stack: "a", Measure: MeasureRequests, PayloadBytes: 30, Run: i + 1, Result: res(r.a, 100), ServerCPUSeconds: 0.001},
			Sample{Stack: "b", Measure: MeasureRequests, PayloadBytes: 30, Run: i + 1, Result: res(r.b, 100), ServerCPUSeconds: 0.002})
	}
	// A run that only b finished does not pair.
	samples = append(samples, Sample{Stack: "b", Measure: MeasureRequests, PayloadBytes: 30, Run: 4, Result: res(10, 1)})
	d := NewDocument(Metadata{Stacks: []string{"a", "b"}}, samples)
	if len(d.Comparisons) != 1 {
		t.Fatalf("comparisons %+v", d.Comparisons)
	}
	c := d.Comparisons[0]
	if c.Pairs != 3 || math.Abs(c.RateRatio-1000.0/1100) > 1e-9 || math.Abs(c.CPURatio-0.5) > 1e-9 || c.Stacks != [2]string{"a", "b"} {
		t.Errorf("comparison %+v; want 3 pairs, rate ratio 0.909, CPU ratio 0.5", c)
	}
	if !strings.Contains(d.Table().Rows[0][4], "0.91x") {
		t.Errorf("table row %q lacks the paired ratio", d.Table().Rows[0])
	}
}

// TestDocumentErrorsPerStack: refusals of one stack show in its own
// column and under the table, not mixed with the other stack's.
func TestDocumentErrorsPerStack(t *testing.T) {
	refused := "CONNECTION_REFUSED (remote): too many connections"
	samples := []Sample{
		{Stack: "satquic", Measure: MeasureConnections, PayloadBytes: 1024, Run: 1, Result: &load.Result{
			Connections: 900, ConnectionsPerSecond: 180, Errors: 3412,
			ErrorsByKind:  map[string]int64{load.KindConnect: 3400, load.KindTimeout: 12},
			ErrorExamples: map[string]string{load.KindConnect: refused, load.KindTimeout: "deadline"},
		}},
		{Stack: "quic-go", Measure: MeasureConnections, PayloadBytes: 1024, Run: 1, Result: &load.Result{
			Connections: 500, ConnectionsPerSecond: 100,
		}},
		{Stack: "satquic", Measure: MeasureConnections, PayloadBytes: 1024, Run: 2, Result: &load.Result{
			Connections: 900, ConnectionsPerSecond: 180, Errors: 8,
			ErrorsByKind:  map[string]int64{load.KindConnect: 8},
			ErrorExamples: map[string]string{load.KindConnect: "second run"},
		}},
	}
	m := Metadata{Stacks: []string{"satquic", "quic-go"}, Runs: 2}
	doc := NewDocument(m, samples)
	sq := doc.Results[0]
	if sq.Stack != "satquic" || sq.Errors != 3420 || sq.ErrorsByKind[load.KindConnect] != 3408 ||
		sq.ErrorExamples[load.KindConnect] != refused {
		t.Errorf("satquic summary %+v", sq)
	}
	if qg := doc.Results[1]; qg.Errors != 0 || qg.ErrorsByKind != nil {
		t.Errorf("quic-go summary %+v", qg)
	}
	tab := doc.Table()
	col := map[string]int{}
	for i, c := range tab.Columns {
		col[c] = i
	}
	row := tab.Rows[0]
	if row[col["satquic errors"]] != "3420" || row[col["quic-go errors"]] != "0" {
		t.Errorf("columns %v, row %v", tab.Columns, row)
	}
	var text bytes.Buffer
	if err := doc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "errors of satquic, new-connections 1 KiB: 3420\n  connect: 3408 (first: " + refused + ")\n  timeout: 12 (first: deadline)\n"
	if !strings.Contains(text.String(), want) || strings.Contains(text.String(), "errors of quic-go") {
		t.Errorf("text lacks %q or lists quic-go:\n%s", want, text.String())
	}
}

// ConnectionsOnly measures new connections alone, and needs NewConn.
func TestRunConnectionsOnly(t *testing.T) {
	certs, err := WriteCerts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Servers:  []Server{quicgoServer{}},
		Payloads: []int64{30}, Workers: 2, Duration: 100 * time.Millisecond, Runs: 1, ConnectionsOnly: true,
	}
	if _, err := Run(context.Background(), cfg, certs); err == nil {
		t.Fatal("ConnectionsOnly without NewConn ran")
	}
	cfg.NewConn = true
	samples, err := Run(context.Background(), cfg, certs)
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 1 || samples[0].Measure != MeasureConnections {
		t.Fatalf("samples %+v, want one of new connections", samples)
	}
}
