//go:build linux

package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

func lookupCase(t *testing.T, name string) *Case {
	t.Helper()
	cs, err := LookupCases(name)
	if err != nil {
		t.Fatal(err)
	}
	return cs[0]
}

// runCell runs one case between a client and a server and returns what
// it gave.
func runCell(t *testing.T, c *Case, client, server Implementation) cellRun {
	t.Helper()
	work := t.TempDir()
	for _, im := range []Implementation{client, server} {
		if err := im.Prepare(context.Background(), work); err != nil {
			t.Skipf("%s: %v", im.Name(), err)
		}
	}
	cr := &caseRun{c: c, work: filepath.Join(work, c.Name), seed: 1}
	if err := cr.prepare(); err != nil {
		t.Fatal(err)
	}
	proto, ok := protocolFor(c, client, server)
	if !ok {
		t.Fatalf("no protocol between %s and %s", client.Name(), server.Name())
	}
	return cr.run(context.Background(), client, server, proto, 0)
}

// TestChecksCatch makes sure the checks can fail: the capture of a plain
// handshake between satquic's client and server must fail every check
// that wants more than a handshake, each for the reason it looks for.
func TestChecksCatch(t *testing.T) {
	testkit.CheckGoroutines(t)
	run := runCell(t, lookupCase(t, "handshake"), &satquicImpl{}, &satquicImpl{})
	if len(run.reasons) > 0 {
		t.Fatalf("handshake failed: %v", run.reasons)
	}
	o := &outcome{a: run.analysis}
	for _, c := range []struct {
		name  string
		check func(*outcome) []string
		want  string
	}{
		{"retry", checkRetry, "no Retry packet"},
		{"resumption", checkResumption, "1 handshakes, want 2"},
		{"zerortt", checkZeroRTT, "no 0-RTT data"},
		{"keyupdate", checkKeyUpdate, "key phase 1: 0 from the client, 0 from the server"},
		{"chacha20", checkChaCha20, "want ChaCha20 alone"},
		{"longrtt", checkLongRTT, "1 ClientHellos, want 2 or more"},
		{"handshakeloss", checkMulticonnect, "1 handshakes, want 50"},
		{"amplificationlimit", checkAmplification, "not the long chain"},
		{"ecn", checkECN, "does not show ECN codepoints"},
		{"v2", checkV2, "want 0x6b3343cf among them"},
		{"ipv6", checkIPv6, "is not IPv6"},
		{"rebind-port", checkRebindPort, "the server saw only one path"},
		{"rebind-addr", checkRebindAddr, "the server sent to 1 client IP addresses"},
		{"connectionmigration", checkConnectionMigration, "the client never sent from a new path"},
	} {
		reasons := strings.Join(c.check(o), "; ")
		if !strings.Contains(reasons, c.want) {
			t.Errorf("%s: got %q, want a reason with %q", c.name, reasons, c.want)
		}
	}
	if reasons := checkHandshake(o); len(reasons) > 0 {
		t.Errorf("the handshake's own check failed: %v", reasons)
	}
}

// fastCases are the cases of the test against peers: a few seconds each
// through the emulated link (transfer moves 10 MB at 10 Mbit/s).
const fastCases = "handshake,transfer,retry,http3"

// TestPeers runs the fast cases between satquic and each peer, satquic as
// client and as server, and each peer against itself. The peers run at
// once, each through relays of their own; ngtcp2 needs the Debian
// packages ngtcp2-client and ngtcp2-server and is skipped without them.
func TestPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("the cases take real seconds through the emulated link")
	}
	cs, err := LookupCases(fastCases)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	for _, peer := range []Implementation{&quicgoImpl{}, &ngtcp2Impl{}} {
		t.Run(peer.Name(), func(t *testing.T) {
			t.Parallel()
			if peer.Name() == "ngtcp2" {
				if why := NgTCP2Missing(); why != "" {
					t.Skip(why)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			m, err := Run(ctx, Options{Cases: cs, Implementations: []Implementation{&satquicImpl{}, peer},
				Work: t.TempDir(), Seed: 1, Progress: testWriter{t, &mu}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range m.Results {
				if r.Status != Pass {
					t.Errorf("%s %s->%s: %s: %s (%s; %s)", r.Case, r.Client, r.Server, r.Status, r.Reason, r.Link, r.Capture)
				}
			}
			if !m.Verdict() {
				t.Errorf("verdict: %v", m.Required)
			}
		})
	}
}

// testWriter sends progress lines to the test log.
type testWriter struct {
	t  *testing.T
	mu *sync.Mutex
}

func (w testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := strings.TrimSpace(string(b)); s != "" {
		w.t.Log(s)
	}
	return len(b), nil
}

// TestCompareDownloads checks the file check on its own: missing, extra
// and different files are all found.
func TestCompareDownloads(t *testing.T) {
	www, dl := t.TempDir(), t.TempDir()
	names, err := writeFiles(www, []int{10, 20, 30}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := compareDownloads(www, dl, names); err == nil || !strings.Contains(err.Error(), "3 of 3 files missing") {
		t.Fatalf("empty download: %v", err)
	}
	for _, n := range names {
		b, _ := os.ReadFile(filepath.Join(www, n))
		if err := os.WriteFile(filepath.Join(dl, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := compareDownloads(www, dl, names); err != nil {
		t.Fatalf("complete download: %v", err)
	}
	os.WriteFile(filepath.Join(dl, names[1]), []byte("short"), 0o644)
	os.WriteFile(filepath.Join(dl, "stray"), nil, 0o644)
	err = compareDownloads(www, dl, names)
	if err == nil || !strings.Contains(err.Error(), "1 unexpected files") || !strings.Contains(err.Error(), "1 files differ") {
		t.Fatalf("damaged download: %v", err)
	}
}

// TestPathCases runs the cases whose client path changes between satquic
// client and server: its NAT rebinds its port, then its address, and it
// migrates to a new socket by itself.
func TestPathCases(t *testing.T) {
	if testing.Short() {
		t.Skip("the cases take real seconds through the emulated link")
	}
	for _, name := range []string{"rebind-port", "rebind-addr", "connectionmigration"} {
		t.Run(name, func(t *testing.T) {
			run := runCell(t, lookupCase(t, name), &satquicImpl{}, &satquicImpl{})
			if len(run.reasons) > 0 {
				t.Errorf("%s: %v (%s)", name, run.reasons, run.link)
			}
			t.Logf("%s: %s", run.link, run.analysis.Summary())
		})
	}
}
