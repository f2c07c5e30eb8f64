package core

import (
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// ecnHarness drives the ECN state of a real client Conn by hand: it sends
// 1-RTT packets with the codepoint the state picks and acknowledges them
// as onAckFrame would, with explicit times.
type ecnHarness struct {
	t *testing.T
	c *Conn
}

func newECNHarness(t *testing.T) *ecnHarness {
	t.Helper()
	ccfg, _ := testConfigs(t, 3)
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release)
	return &ecnHarness{t: t, c: c}
}

// send sends n datagrams of one 1-RTT packet each at now and returns their
// codepoints.
func (h *ecnHarness) send(now time.Duration, n int) []ecn.Codepoint {
	sp := h.c.spaces[spaceApp]
	var cps []ecn.Codepoint
	for range n {
		plan := []plannedPacket{{space: spaceApp, pn: sp.nextPN}}
		cp := h.c.ecn.codepoint(now, plan)
		rec := sp.sent.push(sp.nextPN)
		h.c.ecn.onSent(now, spaceApp, rec, cp)
		sp.nextPN++
		cps = append(cps, cp)
	}
	return cps
}

// ack validates an ACK frame newly acknowledging pns (ascending) with
// counts, then retires the records as onAckFrame does.
func (h *ecnHarness) ack(counts *wire.ECNCounts, pns ...uint64) bool {
	sp := h.c.spaces[spaceApp]
	acked := make([]recovery.PacketInfo, len(pns))
	for i, pn := range pns {
		acked[i] = recovery.PacketInfo{Space: spaceApp, Number: pn}
	}
	ok := h.c.ecn.ValidateECN(0, spaceApp, counts, acked)
	for _, pn := range pns {
		sp.sent.take(pn)
		if sp.largestAcked == wire.InvalidPacketNumber || pn > sp.largestAcked {
			sp.largestAcked = pn
		}
	}
	return ok
}

// lose declares pns lost as onPacketLost does.
func (h *ecnHarness) lose(pns ...uint64) {
	sp := h.c.spaces[spaceApp]
	for _, pn := range pns {
		if rec := sp.sent.at(pn); rec != nil && rec.live {
			h.c.ecn.onLost(0, rec)
		}
		sp.sent.take(pn)
	}
}

func (h *ecnHarness) wantState(s ECNState) {
	h.t.Helper()
	if got := h.c.ECNState(); got != s {
		h.t.Fatalf("ECN state %v, want %v (failure %q)", got, s, h.c.ecn.failure)
	}
}

func countECN(cps []ecn.Codepoint, want ecn.Codepoint) int {
	n := 0
	for _, cp := range cps {
		if cp == want {
			n++
		}
	}
	return n
}

// The first ten 1-RTT datagrams are marked, then none until the counts
// validate; validation marks everything again (RFC 9000 section 13.4.2).
func TestECNTestingPeriod(t *testing.T) {
	h := newECNHarness(t)
	h.wantState(ECNTesting)
	// A datagram holding a handshake packet is never marked.
	if cp := h.c.ecn.codepoint(0, []plannedPacket{{space: spaceHandshake}, {space: spaceApp}}); cp != ecn.NotECT {
		t.Fatalf("handshake datagram marked %v", cp)
	}
	if cp := h.c.ecn.codepoint(0, []plannedPacket{{space: spaceApp, early: true}}); cp != ecn.NotECT {
		t.Fatalf("0-RTT datagram marked %v", cp)
	}
	cps := h.send(0, 14)
	if countECN(cps[:10], ecn.ECT0) != 10 || countECN(cps[10:], ecn.NotECT) != 4 {
		t.Fatalf("codepoints %v, want 10 ECT(0) then Not-ECT", cps)
	}
	h.wantState(ECNUnknown)
	// Counts that cover the marked packets validate.
	if !h.ack(&wire.ECNCounts{ECT0: 5}, 0, 1, 2, 3, 4) {
		t.Fatal("valid counts rejected")
	}
	h.wantState(ECNCapable)
	if cps := h.send(time.Millisecond, 3); countECN(cps, ecn.ECT0) != 3 {
		t.Fatalf("capable path sends %v", cps)
	}
	if st := h.c.Stats().ECN; st.State != ECNCapable || st.PacketsMarked != 13 {
		t.Fatalf("stats %+v", st)
	}
}

// Testing also ends three PTOs after the first marked packet, however few
// were sent.
func TestECNTestingPeriodTime(t *testing.T) {
	h := newECNHarness(t)
	pto := probeTimeout(h.c.sender.RTT())
	h.send(0, 2)
	if cps := h.send(3*pto-time.Microsecond, 1); cps[0] != ecn.ECT0 {
		t.Fatalf("marked %v before three PTOs", cps[0])
	}
	h.wantState(ECNTesting)
	if cps := h.send(3*pto, 1); cps[0] != ecn.NotECT {
		t.Fatalf("marked %v after three PTOs", cps[0])
	}
	h.wantState(ECNUnknown)
}

// Wrong counts fail validation, and a failed path is marked no more.
func TestECNValidationFailures(t *testing.T) {
	cases := []struct {
		name  string
		first *wire.ECNCounts // counts for packets 0-2, validated
		bad   *wire.ECNCounts // counts for packets 3-4
		why   string
	}{
		{"no counts", &wire.ECNCounts{ECT0: 3}, nil, "without ECN counts"},
		{"decrease", &wire.ECNCounts{ECT0: 3, CE: 1}, &wire.ECNCounts{ECT0: 5, CE: 0}, "below the previous"},
		{"ECT(1)", &wire.ECNCounts{ECT0: 3}, &wire.ECNCounts{ECT0: 4, ECT1: 1}, "ECT(1) count"},
		{"more than sent", &wire.ECNCounts{ECT0: 3}, &wire.ECNCounts{ECT0: 9}, "above the 8 packets"},
		{"bleached", &wire.ECNCounts{ECT0: 3}, &wire.ECNCounts{ECT0: 4}, "grew by 1 for 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newECNHarness(t)
			h.send(0, 8)
			if !h.ack(tc.first, 0, 1, 2) {
				t.Fatal("first counts rejected")
			}
			h.wantState(ECNCapable)
			if h.ack(tc.bad, 3, 4) {
				t.Fatal("bad counts accepted")
			}
			h.wantState(ECNFailed)
			if !strings.Contains(h.c.ecn.failure, tc.why) {
				t.Errorf("failure %q, want it to mention %q", h.c.ecn.failure, tc.why)
			}
			if cps := h.send(time.Millisecond, 2); countECN(cps, ecn.NotECT) != 2 {
				t.Errorf("failed path sends %v", cps)
			}
			// Later counts, even right ones, are ignored.
			if h.ack(&wire.ECNCounts{ECT0: 8}, 5, 6, 7) {
				t.Error("counts used after failure")
			}
		})
	}
}

// Counts of an ACK frame that does not raise the largest acknowledged are
// neither checked nor used (RFC 9000 section 13.4.2.1); CE increases in
// valid counts are used.
func TestECNValidationReordered(t *testing.T) {
	h := newECNHarness(t)
	h.send(0, 6)
	if !h.ack(&wire.ECNCounts{ECT0: 2, CE: 1}, 0, 1, 4) {
		t.Fatal("valid counts with CE rejected")
	}
	// An older ACK frame, arriving late, acknowledges packet 2 with
	// smaller counts.
	if h.ack(&wire.ECNCounts{ECT0: 1}, 2) {
		t.Fatal("counts of a reordered ACK frame used")
	}
	h.wantState(ECNCapable)
	if !h.ack(&wire.ECNCounts{ECT0: 3, CE: 2}, 3, 5) {
		t.Fatal("valid counts rejected")
	}
	if st := h.c.Stats().ECN; st.CEReported != 2 {
		t.Fatalf("CE reported %d, want 2", st.CEReported)
	}
}

// A path that drops marked packets loses the whole testing period: marking
// stops. One marked packet acknowledged shows it does not.
func TestECNTestingPacketsLost(t *testing.T) {
	h := newECNHarness(t)
	h.send(0, 12)
	h.lose(0, 1, 2, 3, 4, 5, 6, 7, 8)
	h.wantState(ECNUnknown)
	h.lose(9)
	h.wantState(ECNFailed)
	if !strings.Contains(h.c.ecn.failure, "lost") {
		t.Errorf("failure %q", h.c.ecn.failure)
	}

	h = newECNHarness(t)
	h.send(0, 12)
	h.lose(0, 1, 2, 3, 4, 5, 6, 7, 8)
	if !h.ack(&wire.ECNCounts{ECT0: 1}, 9, 10) {
		t.Fatal("valid counts rejected")
	}
	h.wantState(ECNCapable)
}

// Received codepoints are counted per space and reported in ACK_ECN
// frames; a disabled connection reports nothing.
func TestECNReceiveCounts(t *testing.T) {
	h := newECNHarness(t)
	e := &h.c.ecn
	for _, cp := range []ecn.Codepoint{ecn.ECT0, ecn.ECT0, ecn.CE, ecn.NotECT, ecn.ECT1} {
		e.rx = cp
		e.onReceived(spaceApp)
	}
	e.rx = ecn.ECT0
	e.onReceived(spaceHandshake)
	var f wire.AckFrame
	e.fillAck(spaceInitial, &f)
	if f.HasECN {
		t.Fatal("ACK_ECN with nothing marked received")
	}
	e.fillAck(spaceApp, &f)
	if want := (wire.ECNCounts{ECT0: 2, ECT1: 1, CE: 1}); !f.HasECN || f.ECN != want {
		t.Fatalf("ACK ECN %v %+v, want %+v", f.HasECN, f.ECN, want)
	}
	if st := h.c.Stats().ECN; st.ECTReceived != 4 || st.CEReceived != 1 {
		t.Fatalf("stats %+v", st)
	}

	ccfg, _ := testConfigs(t, 3)
	ccfg.DisableECN = true
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	c.ecn.rx = ecn.CE
	c.ecn.onReceived(spaceApp)
	f = wire.AckFrame{}
	c.ecn.fillAck(spaceApp, &f)
	if f.HasECN || c.ECNState() != ECNDisabled || c.Stats().ECN.CEReceived != 0 {
		t.Fatalf("disabled ECN counted or reported: %+v", c.Stats().ECN)
	}
	if cp := c.ecn.codepoint(0, []plannedPacket{{space: spaceApp}}); cp != ecn.NotECT {
		t.Fatalf("disabled ECN marks %v", cp)
	}
}

func TestECNStateStrings(t *testing.T) {
	for s, want := range map[ECNState]string{ECNDisabled: "disabled", ECNTesting: "testing", ECNUnknown: "unknown", ECNCapable: "capable", ECNFailed: "failed", 9: "ECNState(9)"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", s, s.String(), want)
		}
	}
}
