package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// bulkChildEnv makes the test binary a child of the bulk experiment, the
// way "satquic bench bulk-peer" is one, so that RunBulk runs its children
// for real.
const bulkChildEnv = "BENCH_BULK_TEST_CHILD"

// runBulkTestChild is the child's main: ROLE then the bulk-peer flags.
func runBulkTestChild(args []string) int {
	if err := bulkTestChild(args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func bulkTestChild(args []string) error {
	if len(args) == 0 {
		return errors.New("no role")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	stack := fs.String("stack", "", "")
	addr := fs.String("addr", "", "")
	certFile := fs.String("cert", "", "")
	keyFile := fs.String("key", "", "")
	idle := fs.Bool("idle", false, "")
	ca := fs.String("ca", "", "")
	name := fs.String("server-name", "", "")
	size := fs.Int64("size", 0, "")
	conns := fs.Int("conns", 0, "")
	// The test children write no profile.
	fs.String("cpuprofile", "", "")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	ctx := context.Background()
	switch args[0] {
	case "server":
		cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return err
		}
		return ServeBulk(ctx, BulkServerOptions{Stack: *stack, Addr: *addr, Cert: cert, Idle: *idle}, os.Stdin, os.Stdout)
	case "client":
		pem, err := os.ReadFile(*ca)
		if err != nil {
			return err
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		o := BulkClientOptions{Stack: *stack, Addr: *addr, Roots: roots, ServerName: *name, Size: *size, Conns: *conns}
		return RunBulkClient(ctx, o, os.Stdin, os.Stdout)
	case "busy":
		// The same role as "satquic bench bulk-peer busy", in short.
		_, err := io.Copy(io.Discard, os.Stdin)
		return err
	}
	return fmt.Errorf("unknown role %q", args[0])
}

// testBulkProgram runs stack's children as this test binary.
func testBulkProgram(t *testing.T, stack string) BulkProgram {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(bulkChildEnv, "1")
	return BulkProgram{
		Stack:  stack,
		Server: []string{exe, "server", "--stack", stack},
		Client: []string{exe, "client", "--stack", stack},
		Idle:   stack == BulkSatquic,
	}
}

func TestRunBulk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a dozen processes")
	}
	qg := quicgoForTest(t)
	f, err := qg.prepare()
	if err != nil {
		t.Fatal(err)
	}
	sq := testBulkProgram(t, BulkSatquic)
	exe := sq.Server[0]
	cfg := BulkConfig{
		Programs: []BulkProgram{
			sq,
			{Stack: BulkQuicgo, Server: []string{f.bin, "bulk-server"}, Client: []string{f.bin, "bulk-client"}, Idle: true},
			testBulkProgram(t, BulkTCPTLS),
		},
		Size: 2<<20 + 3, Runs: 2, IdleConns: 20, Busy: []string{exe, "busy"},
		Timeout: time.Minute, ProfileDir: t.TempDir(),
	}
	var progress bytes.Buffer
	cfg.Progress = &progress
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := RunBulk(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Runs) != 6 {
		t.Fatalf("%d runs, want 6: %+v", len(out.Runs), out.Runs)
	}
	// The order rotates: run 2 starts with quic-go.
	if out.Runs[0].Stack != BulkSatquic || out.Runs[3].Stack != BulkQuicgo {
		t.Errorf("order %s, %s", out.Runs[0].Stack, out.Runs[3].Stack)
	}
	for _, r := range out.Runs {
		if r.Bytes != cfg.Size || r.ElapsedS <= 0 || r.GoodputMbps <= 0 || r.ServerCPUS <= 0 || r.ClientCPUS <= 0 {
			t.Errorf("run %+v", r)
		}
	}
	if len(out.Results) != 3 {
		t.Fatalf("results %+v", out.Results)
	}
	for _, r := range out.Results {
		if r.Runs != 2 || r.MinMbps > r.MedianMbps || r.MedianMbps > r.MaxMbps || r.Ratio <= 0 {
			t.Errorf("result %+v", r)
		}
		if r.Stack == BulkQuicgo && r.Ratio != 1 {
			t.Errorf("quic-go's ratio to itself %v", r.Ratio)
		}
	}
	if len(out.Idle) != 2 {
		t.Fatalf("idle %+v", out.Idle)
	}
	for _, r := range out.Idle {
		// Twenty connections hold at least a few kilobytes each in any
		// stack, and far less than a megabyte.
		if r.Conns != 20 || r.After.Conns != 20 || r.GoBytesPerConn < 1000 || r.GoBytesPerConn > 1<<20 || r.Before.RSSBytes == 0 {
			t.Errorf("idle %+v", r)
		}
	}
	if !strings.Contains(progress.String(), "run 2/2 tcp-tls") || !strings.Contains(progress.String(), "idle quic-go") {
		t.Errorf("progress:\n%s", progress.String())
	}
	// Profiles exist for the satquic children (the test children do not
	// write any) and for quic-go's.
	if _, err := os.Stat(cfg.ProfileDir + "/quic-go-server-1.pprof"); err != nil {
		t.Error(err)
	}
	doc := BulkDocument{Metadata: NewBulkMetadata(cfg, "test", "v0", []string{"bench", "bulk"}), BulkOutcome: out}
	var text, js bytes.Buffer
	if err := doc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Bulk goodput", "one core kept busy", "quic-go", "1.00x", "CPU ns/B", "per idle connection", "Go heap+stacks"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, text.String())
		}
	}
	if err := doc.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back BulkDocument
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Metadata.SizeBytes != cfg.Size || len(back.Runs) != 6 || !back.Metadata.Busy {
		t.Errorf("JSON round trip: %v %+v", err, back.Metadata)
	}
}

// serveBulkInProcess runs ServeBulk with pipes and returns its address,
// the means to ask it for memory reports and to stop it.
func serveBulkInProcess(t *testing.T, o BulkServerOptions) (addr string, mem func() MemReport, stop func() error) {
	t.Helper()
	cert, err := BenchCertificate()
	if err != nil {
		t.Fatal(err)
	}
	o.Cert = cert.TLS
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeBulk(context.Background(), o, inR, outW)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	if !lines.Scan() {
		t.Fatalf("no announcement: %v", <-done)
	}
	var ann struct{ Listening string }
	if err := json.Unmarshal(lines.Bytes(), &ann); err != nil || ann.Listening == "" {
		t.Fatalf("announcement %q: %v", lines.Bytes(), err)
	}
	mem = func() MemReport {
		io.WriteString(inW, "mem\n")
		var m MemReport
		if !lines.Scan() || json.Unmarshal(lines.Bytes(), &m) != nil {
			t.Fatalf("memory report %q", lines.Bytes())
		}
		return m
	}
	stop = sync.OnceValue(func() error {
		inW.Close()
		go io.Copy(io.Discard, outR)
		return <-done
	})
	return ann.Listening, mem, stop
}

func TestBulkInProcess(t *testing.T) {
	cert, _ := BenchCertificate()
	for _, stack := range []string{BulkSatquic, BulkTCPTLS} {
		t.Run(stack, func(t *testing.T) {
			addr, mem, stop := serveBulkInProcess(t, BulkServerOptions{Stack: stack, Addr: "127.0.0.1:0"})
			for _, size := range []int64{0, 1, 3<<20 + 5} {
				var out bytes.Buffer
				o := BulkClientOptions{Stack: stack, Addr: addr, Roots: cert.Pool, ServerName: ServerName, Size: size}
				if err := RunBulkClient(context.Background(), o, strings.NewReader(""), &out); err != nil {
					t.Fatalf("%d bytes: %v", size, err)
				}
				var rep BulkClientReport
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Bytes != size || rep.ElapsedNs <= 0 {
					t.Errorf("%d bytes: report %q: %v", size, out.Bytes(), err)
				}
			}
			if m := mem(); m.HeapBytes == 0 || m.StackBytes == 0 || m.RSSBytes == 0 {
				t.Errorf("memory report %+v", m)
			}
			if err := stop(); err != nil {
				t.Errorf("stop: %v", err)
			}
		})
	}
}

func TestBulkIdleInProcess(t *testing.T) {
	cert, _ := BenchCertificate()
	addr, mem, stop := serveBulkInProcess(t, BulkServerOptions{Stack: BulkSatquic, Addr: "127.0.0.1:0", Idle: true})
	defer stop()
	before := mem()
	if before.Conns != 0 {
		t.Fatalf("before: %+v", before)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		o := BulkClientOptions{Stack: BulkSatquic, Addr: addr, Roots: cert.Pool, ServerName: ServerName, Conns: 40}
		done <- RunBulkClient(context.Background(), o, inR, outW)
		outW.Close()
	}()
	var rep BulkClientReport
	if err := json.NewDecoder(outR).Decode(&rep); err != nil || rep.Open != 40 || rep.OpenNs <= 0 {
		t.Fatalf("report %+v: %v", rep, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for mem().Conns != 40 {
		if time.Now().After(deadline) {
			t.Fatal("the server never held the 40 connections")
		}
		time.Sleep(50 * time.Millisecond)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestBulkClientRefusals(t *testing.T) {
	cert, _ := BenchCertificate()
	for _, o := range []BulkClientOptions{
		{Stack: "sctp", Size: 1},
		{Stack: BulkTCPTLS, Conns: 3},
	} {
		o.Addr, o.Roots, o.ServerName = "127.0.0.1:9", cert.Pool, ServerName
		if err := RunBulkClient(context.Background(), o, strings.NewReader(""), io.Discard); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	for _, o := range []BulkServerOptions{{Stack: "sctp"}, {Stack: BulkTCPTLS, Idle: true}} {
		o.Addr, o.Cert = "127.0.0.1:0", cert.TLS
		if err := ServeBulk(context.Background(), o, strings.NewReader(""), io.Discard); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestRunBulkReportsChildFailure(t *testing.T) {
	sq := testBulkProgram(t, BulkSatquic)
	// A server that cannot load its certificate says so.
	bad := sq
	bad.Server = append(append([]string{}, sq.Server...), "--unknown-flag")
	_, err := RunBulk(context.Background(), BulkConfig{Programs: []BulkProgram{bad}, Size: 10, Runs: 1})
	if err == nil || !strings.Contains(err.Error(), "satquic server") || !strings.Contains(err.Error(), "unknown-flag") {
		t.Errorf("failing server: %v", err)
	}
	for _, cfg := range []BulkConfig{
		{Size: 10, Runs: 1},
		{Programs: []BulkProgram{sq}, Size: 0, Runs: 1},
		{Programs: []BulkProgram{sq}, Size: 10, Runs: 0},
		{Programs: []BulkProgram{sq}, Size: 10, Runs: 1, IdleConns: -1},
	} {
		if _, err := RunBulk(context.Background(), cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func TestSummarizeBulk(t *testing.T) {
	o := &BulkOutcome{
		Runs: []BulkRun{
			{Stack: "satquic", GoodputMbps: 300}, {Stack: "quic-go", GoodputMbps: 100},
			{Stack: "satquic", GoodputMbps: 500}, {Stack: "quic-go", GoodputMbps: 200},
			{Stack: "satquic", GoodputMbps: 400}, {Stack: "quic-go", GoodputMbps: 150},
		},
		Idle: []IdleResult{{Stack: "satquic", GoBytesPerConn: 1000}, {Stack: "quic-go", GoBytesPerConn: 4000}},
	}
	o.Summarize()
	want := []BulkResult{
		{Stack: "satquic", Runs: 3, MedianMbps: 400, MinMbps: 300, MaxMbps: 500, Ratio: 400.0 / 150},
		{Stack: "quic-go", Runs: 3, MedianMbps: 150, MinMbps: 100, MaxMbps: 200, Ratio: 1},
	}
	if fmt.Sprint(o.Results) != fmt.Sprint(want) {
		t.Errorf("results %+v, want %+v", o.Results, want)
	}
	if o.Idle[0].GoRatio != 0.25 || o.Idle[1].GoRatio != 1 {
		t.Errorf("idle ratios %v %v", o.Idle[0].GoRatio, o.Idle[1].GoRatio)
	}
}
