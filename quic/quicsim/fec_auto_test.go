package quicsim

import (
	"testing"

	"github.com/satquic/satquic/netsim"
)

// autoRuns downloads size over the profile with FEC under each policy and
// returns the results by policy. The server runs CUBIC, which slows down
// for every loss it is told of, so that the policies' answers show in the
// times; BBR's model ignores losses below 2% whatever the policy says.
// The client acknowledges by its own policy (no ACK frequency request),
// so that only the FEC policy differs: thinned ACKs move these times too
// (on geo-interop hide then takes 7.84 s, auto 8.17 s, signal 7.83 s).
func autoRuns(t *testing.T, profile string, seed uint64, size int64) map[string]Result {
	t.Helper()
	prof, err := netsim.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Result{}
	for _, policy := range []string{"auto", "hide", "signal"} {
		r, err := Download(DownloadConfig{Profile: prof.WithSeed(seed), Seed: seed, Size: size, MaxDatagramSize: 1452, FEC: true, FECPolicy: policy, CongestionControl: "cubic", NoAckFrequency: true})
		if err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		rs := r.ServerRecovery
		t.Logf("%s %s: %v, rebuilt %d (as congestion %d, delivered %d), signals %d, queue drops %d",
			profile, policy, r.Elapsed, rs.PacketsRecovered, rs.RecoveredAsCongestion, rs.RecoveredAsDelivered, rs.CongestionSignals, r.Down.DroppedQueue)
		out[policy] = r
	}
	return out
}

// On seed-ifc the losses are random (0.1%, the queue never overflows):
// auto hides the rebuilt packets and runs as fast as hide, where signal
// takes half as long again (several times as long over 20 MB).
func TestFECAutoRandomLossPath(t *testing.T) {
	r := autoRuns(t, "seed-ifc", 1, 10_000_000)
	auto, hide, signal := r["auto"], r["hide"], r["signal"]
	if auto.Elapsed > hide.Elapsed*105/100 || 4*auto.Elapsed > 3*signal.Elapsed {
		t.Errorf("auto %v, hide %v, signal %v", auto.Elapsed, hide.Elapsed, signal.Elapsed)
	}
	if rs := auto.ServerRecovery; rs.RecoveredAsDelivered == 0 || rs.RecoveredAsCongestion > rs.RecoveredAsDelivered/10 {
		t.Errorf("auto counted %d rebuilt packets as congestion, %d delivered", rs.RecoveredAsCongestion, rs.RecoveredAsDelivered)
	}
}

// On p2p every loss is the 25-packet queue overflowing (29 ms of queueing
// over a 30 ms path): auto counts the rebuilt packets as congestion and
// runs as signal does, where hide lets the queue overflow.
func TestFECAutoCongestedPath(t *testing.T) {
	r := autoRuns(t, "p2p", 1, 4_000_000)
	auto, hide, signal := r["auto"], r["hide"], r["signal"]
	if auto.Elapsed > signal.Elapsed*105/100 || auto.Elapsed >= hide.Elapsed {
		t.Errorf("auto %v, hide %v, signal %v", auto.Elapsed, hide.Elapsed, signal.Elapsed)
	}
	if auto.Down.DroppedQueue > 2*signal.Down.DroppedQueue {
		t.Errorf("auto lost %d packets to the queue, signal %d", auto.Down.DroppedQueue, signal.Down.DroppedQueue)
	}
	if rs := auto.ServerRecovery; rs.RecoveredAsCongestion < rs.RecoveredAsDelivered {
		t.Errorf("auto counted %d rebuilt packets as congestion, %d delivered", rs.RecoveredAsCongestion, rs.RecoveredAsDelivered)
	}
}

// On geo-interop the 25-packet queue holds 15 ms over a 600 ms path, far
// below the queueing delay auto looks for: its overflows show as losses
// the repairs could not cover, and auto responds to them where hide does
// not: it overflows the queue at most two thirds as often as hide, and
// runs within 5% of signal. Hide is no longer the slowest: since
// MaxOverhead counts repair bytes against source bytes, fewer repairs fill
// the queue, and since a stream's send buffer counts only the bytes not
// yet acknowledged, its overflows cost it less time.
func TestFECAutoShallowQueue(t *testing.T) {
	r := autoRuns(t, "geo-interop", 1, 10_000_000)
	auto, hide, signal := r["auto"], r["hide"], r["signal"]
	if auto.Elapsed > signal.Elapsed*105/100 {
		t.Errorf("auto %v, hide %v, signal %v", auto.Elapsed, hide.Elapsed, signal.Elapsed)
	}
	if 3*auto.Down.DroppedQueue > 2*hide.Down.DroppedQueue {
		t.Errorf("auto lost %d packets to the queue, hide %d", auto.Down.DroppedQueue, hide.Down.DroppedQueue)
	}
	if rs := auto.ServerRecovery; rs.RecoveredAsCongestion == 0 {
		t.Errorf("auto counted no rebuilt packet as congestion (%d delivered)", rs.RecoveredAsDelivered)
	}
}
