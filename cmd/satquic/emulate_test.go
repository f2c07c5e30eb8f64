//go:build linux

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

func TestEmulateBadInputIsOneLineAndStatusTwo(t *testing.T) {
	busy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	pcap := filepath.Join(t.TempDir(), "cap")
	relay := []string{"emulate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(relay, "--profile", "nope"), "unknown network profile"},
		{append(relay, "--profile", "geo", "--loss-down", "1.5"), "not in [0,1]"},
		{append(relay, "--profile", "geo", "--loss", "ge:0.1,1.2"), "not in [0,1]"},
		{append(relay, "--profile", "geo", "--rate-up", "-10M"), "non-negative"},
		{[]string{"emulate", "--profile", "geo", "--listen", busy.LocalAddr().String(), "--upstream", "127.0.0.1:9", "--pcap", pcap}, "address already in use"},
		{[]string{"emulate", "--profile", "geo", "--listen", "127.0.0.1:0"}, "needs --listen and --upstream"},
		{[]string{"emulate", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:9"}, "--profile is required"},
		{[]string{"emulate", "--profile", "geo", "--netns", "--listen", "127.0.0.1:0"}, "exclude each other"},
		{[]string{"emulate", "--profile", "geo", "--netns", "--name", "no spaces"}, "namespace prefix"},
		{append(relay, "--profile", "geo", "--bogus"), "not defined"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(c.args, &stdout, &stderr)
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: status %d, stderr %q; want status 2 and one line about %q", c.args[1:], code, stderr.String(), c.want)
		}
	}
	if matches, _ := filepath.Glob(pcap + "*"); len(matches) > 0 {
		t.Errorf("a failed start left %v behind", matches)
	}
}

func TestEmulateListsProfiles(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"emulate", "--list-profiles"}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	for _, name := range netsim.ProfileNames() {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `\s`).MatchString(stdout.String()) {
			t.Errorf("profile %s missing from the table:\n%s", name, stdout.String())
		}
	}
}

// udpEcho answers every datagram with itself until the test ends.
func udpEcho(t *testing.T) *net.UDPConn {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = c.WriteToUDP(buf[:n], from)
		}
	}()
	return c
}

func TestEmulateRelayRunWritesStats(t *testing.T) {
	echo := udpEcho(t)
	statsFile := filepath.Join(t.TempDir(), "stats.json")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	done := make(chan int)
	go func() {
		done <- runMain([]string{"emulate", "--profile", "none", "--delay", "5ms", "--loss-up", "drop:2",
			"--listen", "127.0.0.1:0", "--upstream", echo.LocalAddr().String(), "--seed", "42",
			"--duration", "1500ms", "--stats-json", statsFile}, &stdout, &stderr)
	}()
	addr := stderr.waitFor(t, regexp.MustCompile(`seed 42; relaying (\S+) ->`))[1]
	c, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 10
	got := 0
	buf := make([]byte, 64)
	for i := range n {
		binary.BigEndian.PutUint32(buf, uint32(i))
		if _, err := c.Write(buf[:8]); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		if _, err := c.Read(buf); err == nil {
			got++
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	if got != n-1 {
		t.Errorf("%d echoes, want %d (the uplink drops packet 2)", got, n-1)
	}
	data, err := os.ReadFile(statsFile)
	if err != nil {
		t.Fatal(err)
	}
	var report emulateReport
	if err := json.Unmarshal(data, &report); err != nil {
		t.Fatal(err)
	}
	if report.Seed != 42 || report.Profile != "none" || report.Mode != "relay" ||
		report.Up.Offered != n || report.Up.DroppedLoss != 1 || report.Down.Sent != n-1 {
		t.Errorf("statistics %s", data)
	}
}

func TestEmulateNamespacesComeAndGo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("namespace mode needs root; skipping")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("iproute2's ip command is not installed; skipping")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("TUN is not available (%v); skipping", err)
	}
	name := "sqcli" + strings.TrimLeft(time.Now().Format(".000"), ".")
	var stdout bytes.Buffer
	var stderr lockedBuffer
	done := make(chan int)
	go func() {
		done <- runMain([]string{"emulate", "--profile", "p2p", "--netns", "--name", name, "--duration", "700ms", "--stats"}, &stdout, &stderr)
	}()
	stderr.waitFor(t, regexp.MustCompile(`ip netns exec `+name+`-client`))
	for _, side := range []string{"-client", "-server"} {
		if _, err := os.Stat("/run/netns/" + name + side); err != nil {
			t.Errorf("namespace %s%s missing while the emulator runs: %v", name, side, err)
		}
	}
	if code := <-done; code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	for _, side := range []string{"-client", "-server"} {
		if _, err := os.Stat("/run/netns/" + name + side); err == nil {
			t.Errorf("namespace %s%s left behind", name, side)
		}
	}
	var report emulateReport
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil || report.Mode != "netns" {
		t.Errorf("statistics on stdout %q: %v", stdout.String(), err)
	}
}

func TestProbeBadFlagsAreOneLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"probe", "--sink", "127.0.0.1:1"}, "--via and --sink are required"},
		{[]string{"probe", "--via", "127.0.0.1:1", "--sink", "127.0.0.1:2", "--direction", "sideways"}, "want up or down"},
		{[]string{"probe", "--via", "127.0.0.1:1", "--sink", "127.0.0.1:2", "--delay", "5ms"}, "need --profile"},
		{[]string{"probe", "--via", "127.0.0.1:1", "--sink", "127.0.0.1:2", "--send-rate", "-1M"}, "--send-rate"},
		{[]string{"probe", "--via", "127.0.0.1:1", "--sink", "127.0.0.1:2", "--profile", "nope"}, "unknown network profile"},
		{[]string{"probe", "--via", "127.0.0.1:1", "--sink", "127.0.0.1:2", "--size", "2"}, "size 2"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(c.args, &stdout, &stderr)
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: status %d, stderr %q; want status 2 and one line about %q", c.args[1:], code, stderr.String(), c.want)
		}
	}
}

// probeJSON is the part of the probe's JSON report the tests read.
type probeJSON struct {
	Sent   int `json:"sent"`
	Checks []struct {
		Name    string `json:"name"`
		Pass    bool   `json:"pass"`
		Skipped bool   `json:"skipped"`
	} `json:"checks"`
}

func (p probeJSON) passed(name string) bool {
	for _, c := range p.Checks {
		if c.Name == name {
			return c.Pass && !c.Skipped
		}
	}
	return false
}

// TestProbeChecksAnEmulator runs the two commands against each other, as
// the accuracy measurements do: once against the emulator's own model,
// once against a model it does not follow, which --check must report.
// Timing is not asserted here: other tests may be loading the machine,
// and the emulator runs long enough for both probes on a busy one.
func TestProbeChecksAnEmulator(t *testing.T) {
	sink := udpEcho(t) // only to reserve a free port for the sink
	addr := sink.LocalAddr().String()
	sink.Close()
	var emOut bytes.Buffer
	var emErr lockedBuffer
	done := make(chan int)
	link := []string{"--profile", "none", "--rate", "40M", "--queue", "4M", "--delay", "3ms", "--loss-up", "ge:0.05,0.5"}
	go func() {
		done <- runMain(append([]string{"emulate", "--listen", "127.0.0.1:0", "--upstream", addr, "--seed", "5", "--duration", "12s", "--stats"}, link...), &emOut, &emErr)
	}()
	via := emErr.waitFor(t, regexp.MustCompile(`relaying (\S+) ->`))[1]
	probeArgs := []string{"probe", "--via", via, "--sink", addr, "--send-rate", "16M", "--size", "600",
		"--duration", "1s", "--warmup", "200ms", "--drain", "200ms", "--json"}

	var stdout, stderr bytes.Buffer
	code := runMain(append(probeArgs, link...), &stdout, &stderr)
	var rep probeJSON
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("probe output %q (stderr %q): %v", stdout.String(), stderr.String(), err)
	}
	if code != 0 || rep.Sent == 0 || len(rep.Checks) != 4 || !rep.passed("loss rate") {
		t.Errorf("status %d, report %s, stderr %s", code, stdout.String(), stderr.String())
	}

	// A model at a quarter of the rate the probe gets through must fail.
	stdout.Reset()
	stderr.Reset()
	wrong := []string{"--profile", "none", "--rate", "4M", "--queue", "4M", "--delay", "3ms", "--loss-up", "ge:0.05,0.5", "--check"}
	code = runMain(append(probeArgs, wrong...), &stdout, &stderr)
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("probe output %q (stderr %q): %v", stdout.String(), stderr.String(), err)
	}
	if code != 1 || rep.passed("delivered rate") || !strings.Contains(stderr.String(), "check against the model failed") {
		t.Errorf("against a wrong model: status %d, stderr %q, report %s", code, stderr.String(), stdout.String())
	}
	if code := <-done; code != 0 {
		t.Errorf("emulator status %d: %s", code, emErr.String())
	}
}
