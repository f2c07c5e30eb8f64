//go:build linux

package emulate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/inetsum"
	"github.com/satquic/satquic/netsim"
)

// echoServer answers every datagram with itself and remembers the source
// ports it saw.
type echoServer struct {
	conn  *net.UDPConn
	mu    sync.Mutex
	ports map[int]int
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	e := &echoServer{conn: c, ports: map[int]int{}}
	go func() {
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			e.mu.Lock()
			e.ports[from.Port]++
			e.mu.Unlock()
			_, _ = c.WriteToUDP(buf[:n], from)
		}
	}()
	t.Cleanup(func() { c.Close() })
	return e
}

func (e *echoServer) sources() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.ports)
}

func startTestRelay(t *testing.T, cfg RelayConfig) *Relay {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	r, err := StartRelay(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

func dialRelay(t *testing.T, r *Relay) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(r.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// pingRTTs sends n numbered datagrams every gap and returns the round-trip
// time of each one that came back, indexed by sequence number. It waits
// for stragglers until wait has passed since the last datagram was sent.
func pingRTTs(t *testing.T, c *net.UDPConn, n int, gap, wait time.Duration) map[int]time.Duration {
	t.Helper()
	sentAt := make([]time.Time, n)
	var sentAll atomic.Int64 // when the last datagram left, once it has
	got := map[int]time.Duration{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for len(got) < n {
			_ = c.SetReadDeadline(time.Now().Add(wait))
			k, err := c.Read(buf)
			if err != nil {
				if last := sentAll.Load(); last != 0 && time.Since(time.Unix(0, last)) >= wait {
					return
				}
				continue
			}
			seq := int(binary.BigEndian.Uint32(buf[:k]))
			if seq < n {
				got[seq] = time.Since(sentAt[seq])
			}
		}
	}()
	msg := make([]byte, 200)
	for i := range n {
		binary.BigEndian.PutUint32(msg, uint32(i))
		sentAt[i] = time.Now()
		if _, err := c.Write(msg); err != nil {
			t.Fatal(err)
		}
		time.Sleep(gap)
	}
	sentAll.Store(time.Now().UnixNano())
	<-done
	return got
}

// timingAttempts is how many times TestRelayAddsConfiguredDelay measures
// the emulator's lateness before it fails: the test process's own
// goroutines, the garbage collector and the tests of other packages share
// the machine's cores, and a measurement they disturbed is taken again
// rather than judged.
const timingAttempts = 3

// testLateBound is the 90th percentile lateness this test accepts: twice
// LateThreshold, since the machine's other test processes take the cores
// the emulator's threads want (as root they run at high priority, but the
// garbage collector of this process stops them too); seen at 1.1 to 1.7
// ms in a full CI run on two cores. The emulator's accuracy against
// LateThreshold is measured by satquic probe with the emulator in a
// process of its own.
const testLateBound = 2 * LateThreshold

func TestRelayAddsConfiguredDelay(t *testing.T) {
	for attempt := 1; ; attempt++ {
		problems := relayDelayRun(t)
		if len(problems) == 0 {
			return
		}
		if attempt == timingAttempts {
			for _, p := range problems {
				t.Error(p)
			}
			return
		}
		t.Logf("attempt %d: %s; measuring again", attempt, strings.Join(problems, "; "))
	}
}

// relayDelayRun sends 100 echoes through a relay of 20 ms up and 30 ms
// down, fails t on a model error, and returns what the emulator's own
// timing missed (emulatorTiming).
func relayDelayRun(t *testing.T) []string {
	echo := startEcho(t)
	up, down := 20*time.Millisecond, 30*time.Millisecond
	r := startTestRelay(t, RelayConfig{
		Upstream: echo.conn.LocalAddr().String(),
		Up:       netsim.LinkConfig{Delay: up, RateBps: 100e6},
		Down:     netsim.LinkConfig{Delay: down, RateBps: 100e6},
	})
	c := dialRelay(t, r)
	const n = 100
	rtts := pingRTTs(t, c, n, 2*time.Millisecond, 500*time.Millisecond)
	if len(rtts) != n {
		t.Fatalf("%d of %d echoes came back over a lossless link", len(rtts), n)
	}
	var all []time.Duration
	for _, d := range rtts {
		all = append(all, d)
	}
	slices.Sort(all)
	want := up + down
	// Below the configured delay is a model error. The round trip also
	// holds this test's own goroutines, which run at ordinary priority on
	// a shared and possibly busy machine, so its median is only held below
	// one and a half times the configured delay (a delay applied twice
	// still fails); the emulator's own timing is checked exactly below.
	if all[0] < want {
		t.Errorf("fastest round trip %v is below the configured %v", all[0], want)
	}
	if med := all[n/2]; med > want*3/2 {
		t.Errorf("median round trip %v, want at most %v", med, want*3/2)
	}
	st := r.Stats()
	if st.Up.Delivered != n || st.Down.Delivered != n || st.Up.Sent != n || st.Down.Sent != n {
		t.Errorf("stats up %+v down %+v, want %d delivered and sent each way", st.Up, st.Down, n)
	}
	return emulatorTiming(t, r, up, down)
}

// emulatorTiming checks the relay's own view of each packet: from
// arrival at the relay to departure takes the configured delay (within the
// histogram's 1.6%; t fails otherwise), and 90% of packets leave within
// testLateBound of their due time (returned as problems otherwise). The
// tail is left to the accuracy measurement (satquic probe against a
// separate emulator process): here the test's own goroutines share the
// process and, on a busy machine, can hold up the emulator's threads when
// the garbage collector stops the world. Without high priority (not root)
// only the lower bound is checked.
func emulatorTiming(t *testing.T, r *Relay, up, down time.Duration) []string {
	t.Helper()
	st := r.Stats()
	var problems []string
	for _, c := range []struct {
		name  string
		d     *direction
		delay time.Duration
	}{{"uplink", r.up, up}, {"downlink", r.down, down}} {
		c.d.stats.mu.Lock()
		sojourn := c.d.stats.sojourn.quantile(0.5)
		late90 := c.d.stats.lateness.quantile(0.9)
		c.d.stats.mu.Unlock()
		if sojourn < c.delay-c.delay/60 {
			t.Errorf("%s: median sojourn %v is below the delay %v", c.name, sojourn, c.delay)
		}
		if st.HighPriority && late90 > testLateBound {
			problems = append(problems, fmt.Sprintf("%s: 90th percentile lateness %v, want at most %v", c.name, late90, testLateBound))
		}
	}
	if !st.HighPriority {
		t.Log("no high priority: emulator timing checked loosely")
	}
	return problems
}

func TestRelayLossFollowsTheModel(t *testing.T) {
	echo := startEcho(t)
	r := startTestRelay(t, RelayConfig{
		Upstream: echo.conn.LocalAddr().String(),
		Up:       netsim.LinkConfig{Loss: "drop:0,3,5-7"},
		Down:     netsim.LinkConfig{Loss: "drop:1"},
	})
	c := dialRelay(t, r)
	rtts := pingRTTs(t, c, 20, time.Millisecond, 200*time.Millisecond)
	// Uplink drops packets 0, 3, 5, 6 and 7; the downlink then drops the
	// second survivor, which is packet 2.
	for _, seq := range []int{0, 2, 3, 5, 6, 7} {
		if _, ok := rtts[seq]; ok {
			t.Errorf("packet %d came back; the loss models drop it", seq)
		}
	}
	if len(rtts) != 14 {
		t.Errorf("%d echoes, want 14", len(rtts))
	}
	st := r.Stats()
	if st.Up.DroppedLoss != 5 || st.Down.DroppedLoss != 1 {
		t.Errorf("dropped by loss: up %d down %d, want 5 and 1", st.Up.DroppedLoss, st.Down.DroppedLoss)
	}
}

// TestRelayCorruptsPayloadsNotFlows checks the trailer design: with every
// packet corrupted within its first 50 bytes, every datagram still reaches
// its flow, and differs from what was sent in exactly one of those bytes.
func TestRelayCorruptsPayloadsNotFlows(t *testing.T) {
	echo := startEcho(t)
	r := startTestRelay(t, RelayConfig{
		Upstream: echo.conn.LocalAddr().String(),
		Up:       netsim.LinkConfig{Corrupt: 1, CorruptRegion: 50, Seed: 3},
	})
	c := dialRelay(t, r)
	sent := make([]byte, 200)
	for i := range sent {
		sent[i] = byte(i)
	}
	buf := make([]byte, 2048)
	for range 20 {
		if _, err := c.Write(sent); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("a corrupted datagram did not come back: %v", err)
		}
		var diffs []int
		for i := range n {
			if buf[i] != sent[i] {
				diffs = append(diffs, i)
			}
		}
		if n != len(sent) || len(diffs) != 1 || diffs[0] >= 50 {
			t.Fatalf("got %d bytes differing at %v; want 200 bytes with one change in the first 50", n, diffs)
		}
	}
	if st := r.Stats(); st.Up.Corrupted != 20 || st.Up.Undeliverable != 0 {
		t.Errorf("corrupted %d, undeliverable %d; want 20 and 0", st.Up.Corrupted, st.Up.Undeliverable)
	}
}

func TestRelayGivesEachClientItsOwnFlow(t *testing.T) {
	echo := startEcho(t)
	r := startTestRelay(t, RelayConfig{Upstream: echo.conn.LocalAddr().String(), IdleTimeout: 400 * time.Millisecond})
	a, b := dialRelay(t, r), dialRelay(t, r)
	for _, c := range []*net.UDPConn{a, b} {
		if got := pingRTTs(t, c, 5, time.Millisecond, 50*time.Millisecond); len(got) != 5 {
			t.Fatalf("%d of 5 echoes", len(got))
		}
	}
	if n := echo.sources(); n != 2 {
		t.Errorf("upstream saw %d source addresses, want 2", n)
	}
	if n := r.Stats().Flows; n != 2 {
		t.Errorf("%d flows, want 2", n)
	}
	deadline := time.Now().Add(2 * time.Second)
	for r.Stats().Flows != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := r.Stats().Flows; n != 0 {
		t.Errorf("%d flows still open after the idle timeout", n)
	}
	// An expired client comes back with a fresh flow.
	if got := pingRTTs(t, a, 3, time.Millisecond, 100*time.Millisecond); len(got) != 3 {
		t.Errorf("%d of 3 echoes after expiry", len(got))
	}
}

// TestRelayWritesPcaps checks the captures, not timing: each echo may
// take seconds on a busy machine.
func TestRelayWritesPcaps(t *testing.T) {
	echo := startEcho(t)
	prefix := filepath.Join(t.TempDir(), "cap")
	r, err := StartRelay(RelayConfig{Listen: "127.0.0.1:0", Upstream: echo.conn.LocalAddr().String(), Pcap: prefix})
	if err != nil {
		t.Fatal(err)
	}
	c := dialRelay(t, r)
	if got := pingRTTs(t, c, 7, time.Millisecond, 2*time.Second); len(got) != 7 {
		t.Fatalf("%d of 7 echoes", len(got))
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"up", "down"} {
		recs := readPcap(t, prefix+"-"+dir+".pcap")
		if len(recs) != 7 {
			t.Fatalf("%s capture has %d packets, want 7", dir, len(recs))
		}
		for _, rec := range recs {
			if len(rec) != ipv4HeaderLen+udpHeaderLen+200 || rec[0] != 0x45 || inetsum.Checksum(0, rec[:20]) != 0 {
				t.Fatalf("%s record is not a 228-byte IPv4 packet with a valid header: % x", dir, rec[:min(len(rec), 28)])
			}
		}
	}
}

// readPcap returns the records of a classic pcap file written by pcapWriter.
func readPcap(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 24 || binary.LittleEndian.Uint32(data) != pcapMagicNanos || binary.LittleEndian.Uint32(data[20:]) != linkTypeRaw {
		t.Fatalf("%s: bad pcap file header", path)
	}
	var recs [][]byte
	for off := 24; off < len(data); {
		if off+16 > len(data) {
			t.Fatalf("%s: truncated record header", path)
		}
		n := int(binary.LittleEndian.Uint32(data[off+8:]))
		off += 16
		if off+n > len(data) {
			t.Fatalf("%s: truncated record", path)
		}
		recs = append(recs, data[off:off+n])
		off += n
	}
	return recs
}

func TestRelayRejectsBadConfigs(t *testing.T) {
	busy, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct {
		name string
		cfg  RelayConfig
	}{
		{"port in use", RelayConfig{Listen: busy.LocalAddr().String(), Upstream: "127.0.0.1:9"}},
		{"no upstream port", RelayConfig{Listen: "127.0.0.1:0", Upstream: "127.0.0.1"}},
		{"negative rate", RelayConfig{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:9", Up: netsim.LinkConfig{RateBps: -1}}},
		{"loss above 1", RelayConfig{Listen: "127.0.0.1:0", Upstream: "127.0.0.1:9", Down: netsim.LinkConfig{Loss: "uniform:1.5"}}},
		{"relay to itself", RelayConfig{Listen: busy.LocalAddr().String(), Upstream: busy.LocalAddr().String()}},
	} {
		r, err := StartRelay(c.cfg)
		if err == nil {
			r.Close()
			t.Errorf("%s: started", c.name)
			continue
		}
		if errors.Is(err, os.ErrClosed) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
