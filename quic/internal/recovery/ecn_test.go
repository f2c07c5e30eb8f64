package recovery

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// recordingValidator records what OnAck asks and answers verdict.
type recordingValidator struct {
	verdict bool
	calls   int
	space   Space
	counts  *wire.ECNCounts
	acked   []uint64
}

func (v *recordingValidator) ValidateECN(_ time.Duration, space Space, counts *wire.ECNCounts, acked []PacketInfo) bool {
	v.calls++
	v.space, v.counts, v.acked = space, counts, numbers(acked)
	return v.verdict
}

// A rejected count is no congestion signal; an accepted one is, and the
// validator sees exactly the newly acknowledged packets.
func TestECNValidatorGatesCE(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	sendN(t, s, 0, 0, 10)
	v := &recordingValidator{verdict: false}
	counts := &wire.ECNCounts{ECT0: 4, CE: 1}
	if _, err := s.OnAck(100*ms, SpaceApplication, &Ack{Ranges: rng(0, 4), ECN: counts, ECNCheck: v}); err != nil {
		t.Fatal(err)
	}
	if v.calls != 1 || v.space != SpaceApplication || v.counts != counts || len(v.acked) != 5 || v.acked[4] != 4 {
		t.Fatalf("validator saw %+v", v)
	}
	if st := s.Stats(); st.ECNCEIncreases != 0 || st.CongestionSignals != 0 {
		t.Fatalf("rejected counts gave a signal: %+v", st)
	}
	wantWindow(t, s, 12000+5*1200, InfiniteSSThresh, PhaseSlowStart)

	v.verdict = true
	counts = &wire.ECNCounts{ECT0: 7, CE: 2}
	if _, err := s.OnAck(110*ms, SpaceApplication, &Ack{Ranges: rng(0, 7), ECN: counts, ECNCheck: v}); err != nil {
		t.Fatal(err)
	}
	if v.calls != 2 || len(v.acked) != 3 || v.acked[0] != 5 {
		t.Fatalf("validator saw %+v", v)
	}
	if st := s.Stats(); st.ECNCEIncreases != 1 || st.CongestionSignals != 1 {
		t.Fatalf("accepted counts: %+v", st)
	}

	// An ACK that acknowledges nothing new is not validated.
	if _, err := s.OnAck(120*ms, SpaceApplication, &Ack{Ranges: rng(0, 7), ECN: counts, ECNCheck: v}); err != nil {
		t.Fatal(err)
	}
	if v.calls != 2 {
		t.Fatalf("validator called for a duplicate ACK")
	}
}
