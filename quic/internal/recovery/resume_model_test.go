package recovery

import (
	"testing"
	"time"
)

// resumeRun is what runResumeModel saw: when each Careful Resume phase
// began, every packet sent and acknowledged, and the bottleneck's drops.
type resumeRun struct {
	phases    []phaseChange
	sent      []timedBytes
	acked     []timedBytes
	firstDrop time.Duration
	dropped   int
	stats     Stats
	// lostAtRetreat is the packets declared lost when Safe Retreat began.
	lostAtRetreat uint64
}

type phaseChange struct {
	at    time.Duration
	phase ResumePhase
}

type timedBytes struct {
	at    time.Duration
	bytes int64
}

// entered is when phase p was first entered, or -1.
func (r *resumeRun) entered(p ResumePhase) time.Duration {
	for _, c := range r.phases {
		if c.phase == p {
			return c.at
		}
	}
	return -1
}

// between sums the bytes of xs in [from, to).
func between(xs []timedBytes, from, to time.Duration) int64 {
	var n int64
	for _, x := range xs {
		if x.at >= from && x.at < to {
			n += x.bytes
		}
	}
	return n
}

// deliveredAt is when the acknowledged bytes reached n, or -1.
func (r *resumeRun) deliveredAt(n int64) time.Duration {
	var sum int64
	for _, a := range r.acked {
		if sum += a.bytes; sum >= n {
			return a.at
		}
	}
	return -1
}

// runResumeModel drives a Sender with an infinite backlog over the
// bottleneck, as runModel does, after handing it the saved state st (if
// any) at time 0.
func runResumeModel(t *testing.T, cfg Config, b *bottleneck, st *ResumeState, duration time.Duration) *resumeRun {
	t.Helper()
	s := newSender(t, cfg)
	s.ConfirmHandshake(0)
	if st != nil && !s.StartCarefulResume(0, *st) {
		t.Fatal("StartCarefulResume refused the saved state")
	}
	run := &resumeRun{firstDrop: -1}
	phase := s.ResumePhase()
	note := func(at time.Duration) {
		if p := s.ResumePhase(); p != phase {
			phase = p
			run.phases = append(run.phases, phaseChange{at, p})
			if p == ResumeSafeRetreat {
				run.lostAtRetreat = s.Stats().PacketsLost
			}
		}
	}
	var pn uint64
	for now := time.Duration(0); now <= duration; {
		for at, ok := b.nextAck(); ok && at <= now; at, ok = b.nextAck() {
			a := &b.acks[b.head]
			b.head++
			res, err := s.OnAck(at, SpaceApplication, &Ack{Ranges: a.ranges[:a.n]})
			if err != nil {
				t.Fatalf("at %v: %v", at, err)
			}
			for _, p := range res.Acked {
				run.acked = append(run.acked, timedBytes{at, int64(p.Bytes)})
			}
			note(at)
		}
		if d, ok := s.Deadline(); ok && d <= now {
			s.OnTimeout(now)
			note(now)
		}
		for s.CanSend() && s.NextSendTime(now, seg) <= now {
			if err := s.OnPacketSent(now, SentPacket{Space: SpaceApplication, Number: pn, Bytes: seg, AckEliciting: true, InFlight: true}); err != nil {
				t.Fatal(err)
			}
			dropped := b.dropped
			b.send(now, pn, seg)
			if b.dropped > dropped && run.firstDrop < 0 {
				run.firstDrop = now
			}
			run.sent = append(run.sent, timedBytes{now, seg})
			pn++
			note(now)
		}
		now = nextEvent(s, b, now, duration)
	}
	run.dropped = b.dropped
	run.stats = s.Stats()
	return run
}

// geoResumePath is the geo profile's figures (docs/architecture.md,
// "Network profiles"): 50 Mbit/s, a 650 ms round trip, a buffer of one
// bandwidth-delay product; and the state a connection saved on it: the
// bandwidth-delay product, 4,062,500 bytes per 650 ms.
func geoResumePath(rate uint64) (*bottleneck, ResumeState) {
	const bdp = 50_000_000 / 8 * 650 / 1000
	b := &bottleneck{rate: rate, oneWay: 325 * ms, buffer: int64(rate) * 650 / 1000}
	return b, ResumeState{SavedCwnd: bdp, SavedRTT: 650 * ms}
}

func resumeServerConfig() Config {
	cfg := DefaultConfig()
	cfg.IsServer = true
	return cfg
}

// wantPhases checks the phase changes of a run, to the nanosecond.
func wantPhases(t *testing.T, run *resumeRun, want ...phaseChange) {
	t.Helper()
	if len(run.phases) != len(want) {
		t.Fatalf("phases %v, want %v", run.phases, want)
	}
	for i := range want {
		if run.phases[i] != want[i] {
			t.Fatalf("phases %v, want %v", run.phases, want)
		}
	}
}

// A resumed sender on the geo path jumps when its scaled initial window
// is full, 736 ms in: it sends jump_cwnd (half the saved window) paced
// over the round trip, and in the next round trip 94% of saved_cwnd, the
// saved rate; it validates the jump without a loss and goes on in
// congestion avoidance at the saved window. Its first megabyte arrives
// 421 ms sooner than a cold sender's, whose accelerated slow start
// (longrtt.go) reaches the rate a round trip later.
func TestModelResumeGEO(t *testing.T) {
	const rate = 50_000_000 / 8
	b, st := geoResumePath(rate)
	run := runResumeModel(t, resumeServerConfig(), b, &st, 10*time.Second)
	cb, _ := geoResumePath(rate)
	cold := runResumeModel(t, resumeServerConfig(), cb, nil, 10*time.Second)

	wantPhases(t, run,
		phaseChange{735790544, ResumeUnvalidated},
		phaseChange{1386020336, ResumeValidating},
		phaseChange{2036212336, ResumeNormal})
	jump := run.entered(ResumeUnvalidated)
	rtt := 650 * ms
	perRTT := func(r *resumeRun, k int) int64 {
		return between(r.sent, jump+time.Duration(k)*rtt, jump+time.Duration(k+1)*rtt)
	}
	for k, want := range []int64{2_029_200, 3_801_600, 3_856_800, 4_058_400} {
		if got := perRTT(run, k); got != want {
			t.Errorf("round trip %d after the jump: %d bytes sent, want %d", k, got, want)
		}
	}
	if got := run.stats.ResumeUnvalidatedBytes; got != 2_029_200 {
		t.Errorf("%d bytes sent unvalidated, want 2029200 (jump_cwnd %d less the flight at the jump)", got, st.SavedCwnd/2)
	}
	if run.dropped != 0 || cold.dropped != 0 {
		t.Errorf("%d packets dropped resumed, %d cold; want none", run.dropped, cold.dropped)
	}
	for _, tc := range []struct {
		mb            int64
		resumed, cold time.Duration
	}{{1, 1672109337, 2093232000}, {5, 2599207729, 2764464000}, {10, 3438903729, 3603312000}} {
		r, c := run.deliveredAt(tc.mb<<20), cold.deliveredAt(tc.mb<<20)
		if r != tc.resumed || c != tc.cold {
			t.Errorf("%d MiB delivered at %v resumed, %v cold; want %v and %v", tc.mb, r, c, tc.resumed, tc.cold)
		}
	}
}

// The bottleneck fell to a quarter of the saved rate (12.5 Mbit/s, with a
// buffer of its new bandwidth-delay product, as the geo profile sizes
// it): the jump, paced at twice what the path now carries, fills the
// buffer by the end of the Unvalidated Phase, and the Validating Phase's
// growth overflows it. The RTT samples of the unvalidated packets show the
// queue, and the sender enters Safe Retreat 327 ms after the first drop,
// before any loss is detected. 681 packets (817,200 bytes) are lost in
// 20 s, against 331 for a cold sender.
func TestModelResumeSafeRetreat(t *testing.T) {
	const rate = 50_000_000 / 8 / 4
	b, st := geoResumePath(rate)
	run := runResumeModel(t, resumeServerConfig(), b, &st, 20*time.Second)
	cb, _ := geoResumePath(rate)
	cold := runResumeModel(t, resumeServerConfig(), cb, nil, 20*time.Second)

	wantPhases(t, run,
		phaseChange{737885202, ResumeUnvalidated},
		phaseChange{1389808908, ResumeValidating},
		phaseChange{1717792000, ResumeSafeRetreat},
		phaseChange{2688544000, ResumeNormal})
	retreat := run.entered(ResumeSafeRetreat)
	if run.firstDrop != 1390737474 || retreat-run.firstDrop > 650*ms {
		t.Errorf("first drop at %v, Safe Retreat at %v: want the drop at 1.390737474s and the retreat within a round trip", run.firstDrop, retreat)
	}
	if run.lostAtRetreat != 0 {
		t.Errorf("%d packets declared lost before Safe Retreat, want none", run.lostAtRetreat)
	}
	if run.dropped != 681 || cold.dropped != 331 {
		t.Errorf("%d packets dropped resumed, %d cold; want 681 and 331", run.dropped, cold.dropped)
	}
}
