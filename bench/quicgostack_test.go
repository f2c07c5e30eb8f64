package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	sharedQuicgoOnce sync.Once
	sharedQuicgo     *quicgoStack
	sharedQuicgoErr  error
)

// quicgoForTest is a quic-go stack whose peer is built once for the
// package's tests (a build links quic-go: seconds on a busy machine). It
// skips when the machine cannot build it, saying why.
func quicgoForTest(t *testing.T) *quicgoStack {
	t.Helper()
	sharedQuicgoOnce.Do(func() {
		st, err := LookupStack("quic-go")
		if err != nil {
			sharedQuicgoErr = err
			return
		}
		sharedQuicgo = st.(*quicgoStack)
		sharedQuicgoErr = sharedQuicgo.Check()
	})
	if sharedQuicgoErr != nil {
		if _, err := exec.LookPath("go"); err != nil {
			t.Skipf("%v; skipping", sharedQuicgoErr)
		}
		t.Fatal(sharedQuicgoErr)
	}
	return sharedQuicgo
}

func TestQuicgoStackCheck(t *testing.T) {
	st := quicgoForTest(t)
	if st.Name() != "quic-go" || st.HandshakeRTTs() != 1 {
		t.Errorf("name %q, handshake RTTs %d", st.Name(), st.HandshakeRTTs())
	}
	f, err := st.prepare()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{f.bin, f.cert, f.key} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if fi, err := os.Stat(f.key); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	out, err := exec.Command(f.bin, "help").Output()
	if err != nil || !strings.Contains(string(out), "serve") || !strings.Contains(string(out), "get") {
		t.Errorf("the built peer's help: %v\n%s", err, out)
	}

	// A stack of its own: Close removes what Check built.
	own := &quicgoStack{}
	if err := own.Check(); err != nil {
		t.Fatal(err)
	}
	dir := own.dir
	if err := CloseStacks([]Stack{own, &satquicStack{name: "satquic"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after Close: %v", dir, err)
	}
}

func TestQuicgoStackWithoutToolchain(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GOROOT", "")
	st := &quicgoStack{}
	err := st.Check()
	if err == nil || !strings.Contains(err.Error(), "no Go toolchain") {
		t.Fatalf("Check without go: %v", err)
	}
	if _, err := st.Start(context.Background(), loopbackEnv()); err == nil || !strings.Contains(err.Error(), "no Go toolchain") {
		t.Errorf("Start after a failed Check: %v", err)
	}
}

func TestIsSatquicRoot(t *testing.T) {
	mk := func(mod string, withPeer bool) string {
		dir := t.TempDir()
		if mod != "" {
			if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if withPeer {
			p := filepath.Join(dir, quicgoPeerPackage)
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "main.go"), []byte("package main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{mk("module github.com/satquic/satquic\n\ngo 1.26\n", true), true},
		{mk("module github.com/satquic/satquic\n", false), false},
		{mk("module example.com/other\n", true), false},
		{mk("module github.com/satquic/satquic/sub\n", true), false},
		{mk("", true), false},
	} {
		if got := isSatquicRoot(c.dir); got != c.want {
			t.Errorf("isSatquicRoot(%s) = %v, want %v", c.dir, got, c.want)
		}
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command; skipping the source lookup")
	}
	root, err := satquicSourceRoot(goTool)
	if err != nil || !isSatquicRoot(root) {
		t.Errorf("satquicSourceRoot = %q, %v", root, err)
	}
}

func TestQuicgoStackOverLoopback(t *testing.T) {
	st := quicgoForTest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ep, err := st.Start(ctx, loopbackEnv())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	for _, size := range []int64{0, 1, 3<<20 + 17} {
		d, err := ep.Download(ctx, size)
		if err != nil {
			t.Fatalf("download of %d bytes: %v", size, err)
		}
		if d.Bytes != size || d.Elapsed <= 0 || !strings.HasPrefix(d.Detail, "cc=cubic handshake=") {
			t.Errorf("download of %d bytes: %+v", size, d)
		}
	}
	if err := ep.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	dctx, dcancel := context.WithTimeout(ctx, 3*time.Second)
	defer dcancel()
	if _, err := ep.Download(dctx, 10); err == nil || !strings.Contains(err.Error(), "server") {
		t.Errorf("download from a stopped server: %v", err)
	}
}

func TestQuicgoServerFailureIsReported(t *testing.T) {
	st := quicgoForTest(t)
	f, err := st.prepare()
	if err != nil {
		t.Fatal(err)
	}
	// The key file holds a certificate: the server cannot start, and says
	// so rather than leaving the caller waiting for its address.
	p, err := startProcess(exec.Command(f.bin, "serve", "--addr", "127.0.0.1:0", "--cert", f.cert, "--key", f.cert))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.firstLine(context.Background(), 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "loading the certificate") {
		t.Errorf("server with a bad key: %v", err)
	}
	if err := p.stop(); err == nil || !strings.Contains(err.Error(), "exit status 1") {
		t.Errorf("stop of a server that failed: %v", err)
	}
}

func TestProcessKilledWithContext(t *testing.T) {
	p, err := startProcess(exec.Command("sleep", "30"))
	if err != nil {
		t.Skipf("no sleep command (%v); skipping", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := p.wait(ctx); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("wait past the deadline: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the kill took %v", d)
	}
	if p.exited() == nil {
		t.Error("a killed process still runs")
	}
}

func TestProcessOutput(t *testing.T) {
	c := newOutputCapture(16)
	c.Write([]byte("first"))
	select {
	case <-c.lineReady:
		t.Fatal("a line announced before its newline")
	default:
	}
	c.Write([]byte(" line\nsecond\nthird line is cut"))
	<-c.lineReady
	if got := string(c.first()); got != "first line" {
		t.Errorf("first = %q", got)
	}
	// The limit keeps 16 bytes: "first line\nsecon".
	if got := string(c.last()); got != "secon" {
		t.Errorf("last = %q", got)
	}
	tb := &tailBuffer{max: 5}
	tb.Write([]byte("abc"))
	tb.Write([]byte("defg"))
	if tb.String() != "cdefg" {
		t.Errorf("tail = %q", tb.String())
	}
}

// TestMain removes the peer the tests built. With bulkChildEnv set the
// binary is a child of the bulk experiment instead (bulk_test.go).
func TestMain(m *testing.M) {
	if os.Getenv(bulkChildEnv) != "" {
		os.Exit(runBulkTestChild(os.Args[1:]))
	}
	code := m.Run()
	if sharedQuicgo != nil {
		if err := sharedQuicgo.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}
