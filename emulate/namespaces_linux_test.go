package emulate

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
)

// requireNamespaces skips a test that needs the emulator's namespace mode,
// saying what is missing.
func requireNamespaces(t *testing.T) {
	t.Helper()
	testkit.RequireNamespaces(t, "namespace mode")
}

// testPrefix is a namespace prefix no other test run uses at the same time.
func testPrefix(tag string) string {
	return fmt.Sprintf("sqt%s%d", tag, os.Getpid()%100000)
}

func startTestNamespaces(t *testing.T, cfg NamespaceConfig) *Namespaces {
	t.Helper()
	n, err := StartNamespaces(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Error(err)
		}
		for _, s := range []Side{n.Client(), n.Server()} {
			if netnsExists(s.Namespace) {
				t.Errorf("namespace %s still exists after Close", s.Namespace)
			}
		}
	})
	return n
}

func TestNamespacesCarryKernelTCP(t *testing.T) {
	requireNamespaces(t)
	link := netsim.LinkConfig{RateBps: 50e6, Delay: 10 * time.Millisecond, Loss: "uniform:0.005", Seed: 7}
	pcap := filepath.Join(t.TempDir(), "tcp")
	n := startTestNamespaces(t, NamespaceConfig{Prefix: testPrefix("t"), Up: link, Down: link, Pcap: pcap})
	srv := n.Server()

	var ln net.Listener
	if err := n.Do(srv, func() (err error) {
		ln, err = net.Listen("tcp", net.JoinHostPort(srv.Addr.String(), "5001"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		sum [32]byte
		n   int64
		err error
	}
	got := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- result{err: err}
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		h := sha256.New()
		k, err := io.Copy(h, c)
		got <- result{sum: [32]byte(h.Sum(nil)), n: k, err: err}
	}()

	payload := make([]byte, 2<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	var conn net.Conn
	if err := n.Do(n.Client(), func() (err error) {
		conn, err = net.DialTimeout("tcp", net.JoinHostPort(srv.Addr.String(), "5001"), 5*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := conn.Write(payload); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	r := <-got
	if r.err != nil || r.n != int64(len(payload)) || r.sum != sha256.Sum256(payload) {
		t.Fatalf("server received %d bytes (err %v), want the %d bytes sent, intact", r.n, r.err, len(payload))
	}
	st := n.Stats()
	t.Logf("2 MiB in %v; uplink %+v", time.Since(start).Round(time.Millisecond), st.Up)
	if st.Up.DroppedLoss == 0 {
		t.Error("the lossy uplink dropped nothing")
	}
	if st.Up.Sent == 0 || st.Down.Sent == 0 {
		t.Error("no packets crossed one of the directions")
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	// The capture holds what the uplink delivered: IPv4 TCP packets from
	// the client to the server.
	recs := readPcap(t, pcap+"-up.pcap")
	if int64(len(recs)) != st.Up.Delivered {
		t.Errorf("uplink capture has %d packets, the link delivered %d", len(recs), st.Up.Delivered)
	}
	for _, r := range recs[:min(len(recs), 20)] {
		if len(r) < 20 || r[0]>>4 != 4 || r[9] != 6 || !bytes.Equal(r[12:16], n.Client().Addr.AsSlice()) {
			t.Fatalf("uplink record is not TCP from the client: % x", r[:min(len(r), 20)])
		}
	}
}

// nsRoundTrips bounces count UDP datagrams off an echo server in the
// server's namespace and returns their round-trip times.
func nsRoundTrips(t *testing.T, n *Namespaces, count int) []time.Duration {
	t.Helper()
	srv := n.Server()
	var echo *net.UDPConn
	if err := n.Do(srv, func() (err error) {
		echo, err = net.ListenUDP("udp", &net.UDPAddr{IP: srv.Addr.AsSlice(), Port: 7})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		buf := make([]byte, 1500)
		for {
			k, from, err := echo.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = echo.WriteToUDP(buf[:k], from)
		}
	}()
	var c *net.UDPConn
	if err := n.Do(n.Client(), func() (err error) {
		c, err = net.DialUDP("udp", nil, &net.UDPAddr{IP: srv.Addr.AsSlice(), Port: 7})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var rtts []time.Duration
	buf := make([]byte, 1500)
	for range count {
		start := time.Now()
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(buf); err != nil {
			t.Fatalf("echo through the namespaces: %v", err)
		}
		rtts = append(rtts, time.Since(start))
	}
	return rtts
}

func TestNamespacesAddDelay(t *testing.T) {
	requireNamespaces(t)
	n := startTestNamespaces(t, NamespaceConfig{
		Prefix: testPrefix("p"),
		Up:     netsim.LinkConfig{Delay: 15 * time.Millisecond},
		Down:   netsim.LinkConfig{Delay: 25 * time.Millisecond},
	})
	rtts := nsRoundTrips(t, n, 10)
	slices.Sort(rtts)
	want := 40 * time.Millisecond
	// As in the relay test, the end-to-end bound is loose because the
	// echo runs at ordinary priority on a machine that may be busy; it
	// still catches a delay applied twice. The emulator's lateness is
	// checked tightly below.
	if rtts[0] < want || rtts[5] > want*3/2 {
		t.Errorf("round trips %v, want %v and at most %v at the median", rtts, want, want*3/2)
	}
	if !n.Stats().HighPriority {
		return
	}
	// The median, not a high quantile: ten packets each way are too few
	// for one scheduling hiccup of a busy machine to be an outlier, and a
	// systematically late emulator shows in the median all the same.
	for _, d := range []*direction{n.up, n.down} {
		d.stats.mu.Lock()
		late50 := d.stats.lateness.quantile(0.5)
		d.stats.mu.Unlock()
		if late50 > LateThreshold {
			t.Errorf("%s: median lateness %v, want at most %v", d.name, late50, LateThreshold)
		}
	}
}

func TestNamespacesRefuseASecondEmulator(t *testing.T) {
	requireNamespaces(t)
	prefix := testPrefix("l")
	startTestNamespaces(t, NamespaceConfig{Prefix: prefix})
	n, err := StartNamespaces(NamespaceConfig{Prefix: prefix})
	if err == nil {
		n.Close()
		t.Fatal("a second emulator started on the same prefix")
	}
	if !strings.Contains(err.Error(), "in use by another emulator") {
		t.Errorf("error %q does not say the prefix is in use", err)
	}
}

func TestNamespacesLeaveForeignNamespacesAlone(t *testing.T) {
	requireNamespaces(t)
	prefix := testPrefix("f")
	ip, _ := findIP()
	if err := ip.run("netns", "add", prefix+"-server"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ip.run("netns", "delete", prefix+"-server") }()
	n, err := StartNamespaces(NamespaceConfig{Prefix: prefix})
	if err == nil {
		n.Close()
		t.Fatal("started over a namespace it did not make")
	}
	if !netnsExists(prefix + "-server") {
		t.Error("the foreign namespace was deleted")
	}
	if netnsExists(prefix + "-client") {
		t.Error("the failed start left its client namespace behind")
	}
}

// TestNamespacesRemoveACrashedRunsLeftovers kills an emulator (a copy of
// this test binary) with SIGKILL and checks that the next start cleans up.
func TestNamespacesRemoveACrashedRunsLeftovers(t *testing.T) {
	requireNamespaces(t)
	prefix := testPrefix("c")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashingEmulator$")
	cmd.Env = append(os.Environ(), "SATQUIC_CRASH_PREFIX="+prefix)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("crashing emulator said %q", line)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !netnsExists(prefix+"-client") || !netnsExists(prefix+"-server") {
		t.Fatal("the killed emulator left nothing behind; the test proves nothing")
	}
	n := startTestNamespaces(t, NamespaceConfig{Prefix: prefix})
	if !n.LeftoverRemoved {
		t.Error("LeftoverRemoved is false after a crashed run")
	}
	// The new namespaces work: datagrams cross them.
	nsRoundTrips(t, n, 2)
}

// TestCrashingEmulator is the child of the crash test: it starts the
// namespaces and waits to be killed.
func TestCrashingEmulator(t *testing.T) {
	prefix := os.Getenv("SATQUIC_CRASH_PREFIX")
	if prefix == "" {
		t.Skip("run by TestNamespacesRemoveACrashedRunsLeftovers")
	}
	if _, err := StartNamespaces(NamespaceConfig{Prefix: prefix}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("ready")
	time.Sleep(30 * time.Second)
}
