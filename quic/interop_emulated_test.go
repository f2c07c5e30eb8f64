//go:build linux

package quic

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/emulate"
	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim"
)

// Interop cases of the QUIC interop runner that need a network between
// the peers, run in real time through the emulator's UDP relay in both
// directions (satquic client with a quic-go server and the reverse), with
// every download checked by its SHA-256: handshakeloss, blackhole and
// longrtt. (transferloss is TestInteropTransferLoss.) The two directions
// of a case run in parallel, each through a relay of its own: the time
// they take is mostly the emulated path's, not CPU. The slow ones skip
// under -short.

// runnerLink is the interop runner's default link: 10 Mbit/s, 15 ms each
// way.
func runnerLink() netsim.LinkConfig {
	return netsim.LinkConfig{RateBps: 10e6, Delay: 15 * time.Millisecond}
}

const (
	// handshakeLossConns is how many connections the handshakeloss case
	// opens, each for one small file; handshakeLossParallel of them are
	// under way at once.
	handshakeLossConns    = 50
	handshakeLossParallel = 10
	// handshakeLossBound is generous: with 30% loss each way a handshake
	// may wait for several probe timeouts, which back off exponentially
	// (see handshakeLossWait), and a loaded machine stretches the rest.
	handshakeLossBound = 3 * time.Minute
)

// TestInteropHandshakeLoss is the runner's handshakeloss case: its link
// loses 30% of the packets each way, in runs of at most 3 (the runner's
// drop-rate scenario), and 50 connections each download a small file.
// Every one must complete, at its first attempt. The loss models are
// seeded; which connection meets which loss still depends on timing.
func TestInteropHandshakeLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("50 handshakes through 30% loss take real seconds")
	}
	testkit.CheckGoroutines(t)
	for i, d := range interopDirections {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), handshakeLossBound)
			defer cancel()
			server := d.serve(t, ctx, handshakeLossWait)
			link := runnerLink()
			link.QueuePackets = 25
			link.Loss = "burst:0.3,3"
			up, down := link, link
			up.Seed, down.Seed = uint64(10*i+1), uint64(10*i+2)
			r := startRelay(t, server, up, down)
			start := time.Now()
			times, err := handshakeLossRun(ctx, d.dial, r.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(times)
			t.Logf("%d connections in %v; time per connection: median %v, max %v", len(times),
				time.Since(start).Round(time.Millisecond), times[len(times)/2].Round(time.Millisecond), times[len(times)-1].Round(time.Millisecond))
			st := r.Stats()
			if st.Up.DroppedLoss == 0 || st.Down.DroppedLoss == 0 {
				t.Errorf("the relay lost %d packets up and %d down", st.Up.DroppedLoss, st.Down.DroppedLoss)
			}
		})
	}
}

// handshakeLossWait is how long either end of the handshakeloss case waits
// for the other: its handshake and idle timeouts. The stacks' defaults
// (satquic: 20 s, and 30 s after its first packet without an answer;
// quic-go: 5 s without an answer, 10 s in all) are too short for 30% loss
// each way: a handshake fails when every copy of one of its datagrams is
// lost, and there are few copies, as probe timeouts back off. Both
// ClientHellos (with ML-KEM key shares) take two datagrams. Seen in runs
// of 500 connections:
//
//   - A satquic client without an RTT sample sends its first flight at 0,
//     1, 3, 7, 15, 31 and 63 s. When the second datagram is lost, and the
//     server's ACK of the first (its only answer) too, nothing arrives:
//     about 0.15 a time, so one connection in 13,000 fails within 30 s,
//     its idle timeout, which must grow with the handshake's.
//   - A quic-go server probes its Initial and Handshake spaces in turn:
//     its ServerHello goes out 0, 0.2, 1, 4.2, 16.8 and 67 s after the
//     ClientHello, in two datagrams but the first time. All 7 of its
//     first 10 s are lost at one connection in 4500; the satquic client,
//     its ClientHello acknowledged, can only send PINGs meanwhile.
//   - When the ServerHello arrives that late, the client acknowledges the
//     Handshake packets it held for want of keys, and quic-go, which
//     ignores ACK Delay in that space, takes their age as its first RTT
//     sample: seen at 8.6 s, so that its probe timeout (26 s, then 52 s)
//     outlasted its idle timeout of 30 s when its answer to the request
//     was lost.
//   - A quic-go client sends its first flight at 0, 0.2, 0.6, 1.4, 3 s,
//     ..., and gives up 5 s after its first packet without an answer.
//
// A loaded machine makes it worse: late replies inflate the first RTT
// samples, which space the probes further apart. The case checks that
// every handshake and download completes through the loss, not how fast:
// in a minute and a half each of these sends its datagrams at least 6
// times, and a run fails about once in 5000.
const handshakeLossWait = 90 * time.Second

// handshakeLossRun opens the connections, each for file 1000+i (about a
// kilobyte), and returns how long each took.
func handshakeLossRun(ctx context.Context, dial func(context.Context, string, time.Duration) (hqClient, error), addr string) ([]time.Duration, error) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, handshakeLossParallel)
	errs := make([]error, handshakeLossConns)
	times := make([]time.Duration, handshakeLossConns)
	for i := range handshakeLossConns {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			start := time.Now()
			c, err := dial(ctx, addr, handshakeLossWait)
			if err != nil {
				errs[i] = fmt.Errorf("connection %d: handshake: %w", i, err)
				return
			}
			defer c.close()
			s, err := c.open(ctx)
			if err == nil {
				err = getHQ(s, strconv.Itoa(1000+i))
			}
			if err != nil {
				errs[i] = fmt.Errorf("connection %d: %w (%v)", i, err, c)
				return
			}
			times[i] = time.Since(start)
		})
	}
	wg.Wait()
	return times, errors.Join(errs...)
}

const (
	blackholeSize = 10 << 20
	// The link is down both ways from blackholeStart for
	// blackholeDuration, timed from the relay's start: at 20 Mbit/s the
	// 10 MiB take at least 4.2 s, so the outage falls in the middle.
	blackholeRate     = 20e6
	blackholeStart    = 2 * time.Second
	blackholeDuration = 2 * time.Second
	blackholeBound    = time.Minute
)

// TestInteropBlackhole is the runner's blackhole case, with one outage: a
// 10 MiB download during which every packet, both ways, is dropped for
// 2 s. Both ends see only probe timeouts, backing off, until the path
// returns; the download must then complete.
func TestInteropBlackhole(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 MiB download with a 2 s outage takes real seconds")
	}
	testkit.CheckGoroutines(t)
	for _, d := range interopDirections {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), blackholeBound)
			defer cancel()
			server := d.serve(t, ctx, 0)
			link := runnerLink()
			link.RateBps = blackholeRate
			link.Outages = []netsim.Outage{{Start: blackholeStart, Duration: blackholeDuration}}
			r := startRelay(t, server, link, link)
			linkStart := time.Now()
			c, err := d.dial(ctx, r.Addr().String(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			s, err := c.open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			name := "size-" + strconv.Itoa(blackholeSize)
			if err := sendHQ(s, name); err != nil {
				t.Fatal(err)
			}
			marks := []time.Duration{blackholeStart, blackholeStart + blackholeDuration}
			n, got, at, err := readMarked(s, linkStart, marks)
			if err != nil {
				t.Fatalf("after %d bytes: %v (%v)", n, err, c)
			}
			if want := sum(testkit.Payload(blackholeSize, blackholeSize)); n != blackholeSize || got != want {
				t.Fatalf("%d bytes, sha256 %x; want %d bytes, %x", n, got, blackholeSize, want)
			}
			t.Logf("10 MiB in %v; %d bytes read when the outage began, %d when it ended; %v",
				time.Since(linkStart).Round(time.Millisecond), at[0], at[1], c)
			if at[0] == 0 || at[0] == blackholeSize {
				t.Errorf("the outage did not fall in the transfer: %d of %d bytes read when it began", at[0], blackholeSize)
			}
			st := r.Stats()
			if st.Up.DroppedOutage == 0 || st.Down.DroppedOutage == 0 {
				t.Errorf("the outage dropped %d packets up and %d down", st.Up.DroppedOutage, st.Down.DroppedOutage)
			}
		})
	}
}

// readMarked reads r to its end and returns the length and SHA-256, and
// for each mark (a time since start) how many bytes had been read by
// then.
func readMarked(r io.Reader, start time.Time, marks []time.Duration) (int64, [32]byte, []int64, error) {
	h := sha256.New()
	at := make([]int64, len(marks))
	buf := make([]byte, 64<<10)
	var n int64
	var err error
	for err == nil {
		var k int
		k, err = r.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		now := time.Since(start)
		for i, m := range marks {
			if now < m {
				at[i] = n
			}
		}
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	if err == io.EOF {
		err = nil
	}
	return n, s, at, err
}

const (
	longRTTDelay = 750 * time.Millisecond
	longRTTBound = time.Minute
)

// TestInteropLongRTT is the runner's longrtt case: 750 ms each way, a
// 1.5 s round trip. Both stacks start from an assumed RTT far below it
// (satquic 333 ms, quic-go 100 ms), so probe timeouts fire during the
// handshake and the first exchange, spuriously; the handshake and two
// small downloads must complete all the same.
func TestInteropLongRTT(t *testing.T) {
	testkit.CheckGoroutines(t)
	for _, d := range interopDirections {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), longRTTBound)
			defer cancel()
			server := d.serve(t, ctx, 0)
			link := runnerLink()
			link.Delay = longRTTDelay
			r := startRelay(t, server, link, link)
			start := time.Now()
			c, err := d.dial(ctx, r.Addr().String(), 0)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			handshake := time.Since(start)
			if handshake < 2*longRTTDelay {
				t.Errorf("handshake in %v, less than a round trip", handshake)
			}
			var wg sync.WaitGroup
			names := []string{"7", "size-10000"}
			errs := make([]error, len(names))
			for i, name := range names {
				wg.Go(func() {
					s, err := c.open(ctx)
					if err == nil {
						err = getHQ(s, name)
					}
					errs[i] = err
				})
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatalf("%v (%v)", err, c)
			}
			t.Logf("handshake in %v, downloads done %v later; %v", handshake.Round(time.Millisecond),
				(time.Since(start) - handshake).Round(time.Millisecond), c)
		})
	}
}

// startRelay starts an emulator relay in front of server with the given
// link in each direction; it closes when the test ends and logs what each
// direction did. The relay's link clock starts here: outages are timed
// from this call.
func startRelay(t *testing.T, server net.Addr, up, down netsim.LinkConfig) *emulate.Relay {
	t.Helper()
	r, err := emulate.StartRelay(emulate.RelayConfig{Listen: "127.0.0.1:0", Upstream: server.String(), Up: up, Down: down})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		logRelay(t, r.Stats())
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

func logRelay(t *testing.T, st emulate.Stats) {
	t.Helper()
	for _, d := range []struct {
		name string
		s    emulate.DirectionStats
	}{{"up", st.Up}, {"down", st.Down}} {
		t.Logf("relay %s: %d offered, %d delivered, lost %d to the loss model, %d to outages, %d to the queue; %d late (max %.1f ms)",
			d.name, d.s.Offered, d.s.Delivered, d.s.DroppedLoss, d.s.DroppedOutage, d.s.DroppedQueue, d.s.Late, d.s.LatenessMax)
	}
}
