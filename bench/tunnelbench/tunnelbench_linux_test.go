package tunnelbench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// clientEndArg makes the test binary the tunnel's client end, as "satquic
// bench tunnel-client" is for the command.
const clientEndArg = "tunnelbench-client-end"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == clientEndArg {
		if err := RunClientEnd(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("bench tunnel needs root: it creates network namespaces and TUN devices")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("no TUN: %v", err)
	}
}

func testPrefix(kind string) string { return fmt.Sprintf("sqx%s%d", kind, os.Getpid()%10000) }

// TestRequestsSmall: a few requests of each stack cross the starlink
// link, through the tunnel where the stack says so, over the lossy link
// and the lossless one; every result has its percentiles in order, an
// overhead above the bare headers' and, over the lossy link, a p99
// excess; the FEC stacks' connections negotiated FEC (source symbols
// both ways in every row) and sent repairs (in the run as a whole).
func TestRequestsSmall(t *testing.T) {
	needRoot(t)
	p, err := netsim.LookupProfile("starlink")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Profile: p, Sizes: []int64{10_000}, Requests: 12, Parallel: 3, Gap: 5 * time.Millisecond,
		Seed: 7, Stacks: AllStacks, Lossless: true, Prefix: testPrefix("r"),
		ClientEnd: []string{os.Args[0], clientEndArg}, WarmUp: 1 << 20,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rs, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * len(AllStacks); len(rs) != want {
		t.Fatalf("%d results, want %d", len(rs), want)
	}
	var repairs uint64
	for _, r := range rs {
		name := r.Link + " " + r.Stack
		if r.Requests != cfg.Requests || r.Failed != 0 {
			t.Errorf("%s: %d requests, %d failed", name, r.Requests, r.Failed)
		}
		// Each tunnel carried the warm-up before the requests were
		// timed, and the link's counters of the requests leave it out.
		want := int64(0)
		if r.Stack != Direct {
			want = cfg.WarmUp
		}
		if r.WarmUpBytes != want || r.LinkBytes >= cfg.WarmUp {
			t.Errorf("%s: warm-up of %d bytes (want %d), %d bytes on the link during the requests", name, r.WarmUpBytes, want, r.LinkBytes)
		}
		if !(r.P50S > 0 && r.P50S <= r.P99S && r.P99S <= r.P999S && r.P999S <= r.MaxS) {
			t.Errorf("%s: percentiles out of order: %+v", name, r)
		}
		// 50 ms of round trip at the least, and 10 kB of body.
		if r.P50S < 0.045 {
			t.Errorf("%s: median %v s is faster than the link", name, r.P50S)
		}
		if r.Overhead <= 0 || r.LinkBytes <= int64(r.Requests)*r.SizeBytes {
			t.Errorf("%s: overhead %v of %d bytes on the link", name, r.Overhead, r.LinkBytes)
		}
		if (r.Link == LinkLossy) != (r.ExcessP99S != nil) {
			t.Errorf("%s: p99 excess %v", name, r.ExcessP99S)
		}
		// FEC negotiated: both ends' packets were source symbols. A row
		// may have no repair of its own: the warm-up's repairs on loss
		// may leave the overhead allowance in debt (up to 48 repairs, paid
		// back over 480 sources), more than a dozen requests send.
		fecOn := r.Stack == TunnelFEC || r.Stack == TunnelFixed
		if fecOn && (r.FEC.SourceBytesSent == 0 || r.FEC.ServerSourceBytesSent == 0) {
			t.Errorf("%s: no source symbols in one direction: %+v", name, r.FEC)
		}
		if fecOn {
			repairs += r.FEC.RepairsReceived + r.FEC.RepairsSent
		}
		if !fecOn && r.FEC.RepairsReceived+r.FEC.RepairsSent != 0 {
			t.Errorf("%s: repairs without FEC: %+v", name, r.FEC)
		}
	}
	if repairs == 0 {
		t.Error("no repair in any FEC stack's run")
	}
	if _, err := Figure(rs, "starlink"); err != nil {
		t.Error(err)
	}
}

// TestGoodputShort: a second of one flow through each tunnel stack over
// the veth pair, and the loopback reference, all move data.
func TestGoodputShort(t *testing.T) {
	needRoot(t)
	cfg := GoodputConfig{
		Flows: []int{1}, LossPercents: []float64{0}, Duration: time.Second, Seed: 3,
		Prefix: testPrefix("g"), ClientEnd: []string{os.Args[0], clientEndArg},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rs, err := RunGoodput(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	for _, r := range rs {
		// A megabit per second is far below what any of them does on an
		// idle machine, and far above nothing.
		// The tunnel stacks run for the duration; the loopback
		// reference moves a fixed size, quicker on a quiet machine.
		timed := r.Stack != "satquic"
		if r.GoodputGbps < 0.001 || r.Bytes <= 0 || (timed && r.Seconds < cfg.Duration.Seconds()) || r.Seconds <= 0 {
			t.Errorf("%s over %s: %d bytes in %v s, %v Gbit/s", r.Stack, r.Link, r.Bytes, r.Seconds, r.GoodputGbps)
		}
		if r.Stack != "satquic" && r.OutSegs == 0 {
			t.Errorf("%s: no TCP segment counted", r.Stack)
		}
		if timed {
			checkDatagramsAccounted(t, r)
		}
	}
}

// checkDatagramsAccounted: over a veth that loses nothing, every packet
// the client end sent reached the server end's sessions, or was dropped
// by the server end and counted, or was in a QUIC packet declared lost;
// none went missing uncounted, which is what made the inner TCP's
// retransmissions a puzzle. The slack covers the few packets sent
// between the two ends' snapshots, and the server's own send drops that
// its count includes.
func checkDatagramsAccounted(t *testing.T, r GoodputResult) {
	t.Helper()
	const slack = 16
	sent := r.Client.DatagramsSent
	accounted := r.ServerReceived + r.ServerDatagramsDropped + r.ServerHTTPDatagramsDropped + r.ServerSessionDrops
	if accounted > sent+slack || sent > accounted+r.Client.DatagramsLost+slack {
		t.Errorf("%s: the client end sent %d packets, the server end received %d and dropped %d+%d+%d, QUIC declared %d lost",
			r.Stack, sent, r.ServerReceived, r.ServerDatagramsDropped, r.ServerHTTPDatagramsDropped, r.ServerSessionDrops, r.Client.DatagramsLost)
	}
}
