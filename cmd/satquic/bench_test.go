//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/satquic/satquic/bench"
)

func TestBenchBadFlagsExitTwo(t *testing.T) {
	missingDir := filepath.Join(t.TempDir(), "no", "such", "dir", "out.json")
	existingDir := t.TempDir()
	existingFile := filepath.Join(existingDir, "plots")
	if err := os.WriteFile(existingFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dirNamedPNG := filepath.Join(existingDir, "fig.png")
	if err := os.Mkdir(dirNamedPNG, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "name an experiment"},
		{[]string{"bench", "upload"}, `unknown experiment "upload"`},
		{[]string{"bench", "download", "--stacks", "tcp-vegas"}, `unknown stack "tcp-vegas"; available: ` + strings.Join(bench.Available(), ", ")},
		{[]string{"bench", "download", "--stacks", "tcp-cubic,tcp-vegas"}, `unknown stack "tcp-vegas"`},
		{[]string{"bench", "download", "--stacks", "quic-go", "--virtual"}, "--virtual: stack quic-go runs only in real time"},
		{[]string{"bench", "download", "--stacks", "tcp-bbr,tcp-bbr"}, "given twice"},
		{[]string{"bench", "download", "--profile", "moon"}, `unknown network profile "moon"`},
		{[]string{"bench", "download", "--sizes", "1MB,ten"}, `size "ten"`},
		{[]string{"bench", "download", "--sizes", "0"}, `size "0"`},
		{[]string{"bench", "download", "--runs", "0"}, "--runs must be at least 1"},
		{[]string{"bench", "download", "--runs", "-2"}, "--runs must be at least 1"},
		{[]string{"bench", "download", "--seed", "-1"}, "seed"},
		{[]string{"bench", "download", "--timeout", "-1s"}, "--timeout"},
		{[]string{"bench", "download", "--virtual", "--stacks", "satquic,tcp-cubic"}, "--virtual: stack tcp-cubic runs only in real time; stacks that run in virtual time: satquic"},
		{[]string{"bench", "download", "--json", missingDir}, "does not exist"},
		{[]string{"bench", "download", "--plot", existingFile}, "is a file; want a directory"},
		{[]string{"bench", "download", "--plot", dirNamedPNG}, "is a directory"},
		{[]string{"bench", "download", "--plot", filepath.Join(missingDir, "plots")}, "does not exist"},
		{[]string{"bench", "download", "--plot", filepath.Join(missingDir, "plots") + "/"}, "does not exist"},
		{[]string{"bench", "download", "--nope"}, "flag provided but not defined"},
		{[]string{"bench", "download", "extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(c.args, &stdout, &stderr)
		msg := stderr.String()
		if c.args[len(c.args)-1] == "bench" {
			// The bare command shows the experiments, then the error.
			msg = msg[strings.LastIndex(strings.TrimSuffix(msg, "\n"), "\n")+1:]
		}
		if code != 2 || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") != 1 || stdout.Len() != 0 {
			t.Errorf("%q: status %d, stderr %q; want status 2 and one line with %q", c.args, code, msg, c.want)
		}
	}
}

func TestBenchHelp(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"bench", "download", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--help: status %d", code)
	}
	for _, want := range []string{"-stacks", "-sizes", "-virtual", "tcp-cubic", "Usage: satquic bench download"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, stdout.String())
		}
	}
}

func requireBenchNamespaces(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bench download runs through network namespaces, which need root; skipping")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip command is not installed; skipping")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("TUN is not available (%v); skipping", err)
	}
	for _, cc := range []string{"cubic", "bbr"} {
		if b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control"); err != nil || !strings.Contains(string(b), cc) {
			t.Skipf("the kernel offers no %s congestion control; skipping", cc)
		}
	}
}

// benchNamespacesLeft lists the namespaces of this process's bench runs.
func benchNamespacesLeft() []string {
	left, _ := filepath.Glob(fmt.Sprintf("/run/netns/sqb%d-*", os.Getpid()%100000))
	return left
}

func TestBenchDownloadWritesFiles(t *testing.T) {
	requireBenchNamespaces(t)
	dir := t.TempDir()
	jsonPath, csvPath, pngPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.csv"), filepath.Join(dir, "r.png")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	code := runMain([]string{"bench", "download", "--profile", "p2p", "--sizes", "100kB", "--runs", "1", "--seed", "3",
		"--stacks", "tcp-cubic,tcp-bbr", "--json", jsonPath, "--csv", csvPath, "--plot", pngPath}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	for _, want := range []string{"[1/2] run 1/1", "[2/2] run 1/1", "tcp-cubic", "tcp-bbr"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, stderr.String())
		}
	}
	// p2p: 3 x 30 ms + 100 kB at 10 Mbit/s = 0.170 s; then the goodput.
	if !regexp.MustCompile(`(?m)^tcp-cubic +100kB +1 +[0-9.]+ .* 0\.170 +[0-9.]+x +[0-9.]+$`).MatchString(stdout.String()) {
		t.Errorf("table:\n%s", stdout.String())
	}
	var doc struct {
		Metadata struct {
			Seed    uint64
			Profile struct{ Name string }
			Machine struct{ Cores int }
		}
		Results []struct {
			Stack     string
			SizeBytes int64   `json:"size_bytes"`
			MedianS   float64 `json:"median_s"`
			LimitS    float64 `json:"limit_s"`
		}
		Runs []struct{ Seconds float64 }
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Metadata.Seed != 3 || doc.Metadata.Profile.Name != "p2p" || doc.Metadata.Machine.Cores < 1 ||
		len(doc.Results) != 2 || len(doc.Runs) != 2 || doc.Results[0].SizeBytes != 100e3 ||
		doc.Results[0].LimitS != 0.17 || doc.Results[0].MedianS < 0.17 {
		t.Errorf("JSON %s", data)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rows, err := csv.NewReader(f).ReadAll(); err != nil || len(rows) != 3 || rows[0][0] != "run" {
		t.Errorf("CSV %q, %v", rows, err)
	}
	img, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if _, err := png.Decode(img); err != nil {
		t.Errorf("plot: %v", err)
	}
	if left := benchNamespacesLeft(); len(left) > 0 {
		t.Errorf("namespaces left behind: %v", left)
	}

	// --plot DIR/ makes the directory and writes a figure of all sizes
	// and one per size.
	plotDir := filepath.Join(dir, "plots") + "/"
	stdout.Reset()
	code = runMain([]string{"bench", "download", "--profile", "p2p", "--sizes", "100kB,200kB", "--runs", "1", "--seed", "3",
		"--stacks", "tcp-cubic", "--plot", plotDir}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("--plot %s: status %d: %s", plotDir, code, stderr.String())
	}
	for _, name := range []string{"download.png", "download-100kB.png", "download-200kB.png"} {
		f, err := os.Open(filepath.Join(plotDir, name))
		if err != nil {
			t.Error(err)
			continue
		}
		if _, err := png.Decode(f); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		f.Close()
	}
}

func TestBenchDownloadInterruptCleansUp(t *testing.T) {
	requireBenchNamespaces(t)
	var stdout bytes.Buffer
	var stderr lockedBuffer
	done := make(chan int)
	// 20 MB at p2p's 10 Mbit/s takes 16 s: the interrupt comes first.
	go func() {
		done <- runMain([]string{"bench", "download", "--profile", "p2p", "--sizes", "20MB", "--runs", "1",
			"--stacks", "tcp-cubic"}, &stdout, &stderr)
	}()
	// The command catches signals before it prints this line.
	stderr.waitFor(t, regexp.MustCompile(`satquic bench download: profile p2p`))
	time.Sleep(500 * time.Millisecond)
	if left := benchNamespacesLeft(); len(left) != 2 {
		t.Errorf("namespaces during the run: %v, want the client's and the server's", left)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stderr.String(), "20MB: interrupted: interrupt signal received") {
			t.Errorf("status %d after SIGINT: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not stop within 10 s of SIGINT")
	}
	if left := benchNamespacesLeft(); len(left) > 0 {
		t.Errorf("namespaces left behind after SIGINT: %v", left)
	}
}

// TestBenchDownloadDefaultStacks: without --stacks, --virtual runs the
// stacks the simulator has (it failed on the real-time defaults), and real
// time includes satquic itself.
func TestBenchDownloadDefaultStacks(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--virtual"}, []string{"satquic", "satquic-hide", "satquic-signal", "satquic-nofec"}},
		{nil, []string{"satquic", "satquic-nofec", "tcp-cubic", "tcp-bbr"}},
	} {
		o, err := parseBenchDownloadFlags(c.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		var got []string
		for _, s := range o.stacks {
			got = append(got, s.Name())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: stacks %q, want %q", c.args, got, c.want)
		}
	}
}

// TestBenchDownloadCC: --cc sets the satquic stacks' controller, leaves
// the kernel TCP stacks theirs, and refuses an unknown name.
func TestBenchDownloadCC(t *testing.T) {
	o, err := parseBenchDownloadFlags([]string{"--stacks", "satquic,satquic-nofec,tcp-cubic", "--cc", "bbr"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range o.stacks {
		c, ok := s.(bench.CongestionControlled)
		if ok != strings.HasPrefix(s.Name(), "satquic") || (ok && c.CongestionControl() != "bbr") {
			t.Errorf("stack %s: controlled %v", s.Name(), ok)
		}
	}
	if _, err := parseBenchDownloadFlags([]string{"--virtual", "--cc", "vegas"}, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("--cc vegas: %v", err)
	}
}

// TestBenchResumeDefaults: bench resume defaults to the seed's profile,
// sizes and stacks, the satquic ones in virtual time.
func TestBenchResumeDefaults(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--virtual"}, []string{"satquic-cold", "satquic-0rtt", "satquic-resume"}},
		{nil, []string{"satquic-cold", "satquic-0rtt", "satquic-resume", "quic-go-cold", "quic-go-0rtt"}},
	} {
		o, err := parseDownloadExperimentFlags(benchResume, c.args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		var got []string
		for _, s := range o.stacks {
			got = append(got, s.Name())
		}
		if !slices.Equal(got, c.want) || o.profile.Name != "geo" || !slices.Equal(o.sizes, []int64{500e3, 1e6, 10e6}) {
			t.Errorf("%q: stacks %q, profile %s, sizes %v", c.args, got, o.profile.Name, o.sizes)
		}
	}
	o, err := parseDownloadExperimentFlags(benchResume, []string{"--virtual", "--stacks", "satquic-resume", "--cc", "bbr"}, io.Discard)
	if err != nil {
		t.Fatalf("--stacks satquic-resume --cc bbr: %v", err)
	}
	if cc, ok := o.stacks[0].(interface{ CongestionControl() string }); !ok || cc.CongestionControl() != "bbr" {
		t.Errorf("--cc bbr does not apply to satquic-resume")
	}
}
