package netsim

import (
	"strings"
	"testing"
	"time"
)

func mustTrace(t *testing.T, text string) *DeliveryTrace {
	t.Helper()
	tr, err := ParseMahimahi(strings.NewReader(text))
	if err != nil {
		t.Fatalf("ParseMahimahi: %v", err)
	}
	return tr
}

func TestTraceDelivery(t *testing.T) {
	// Opportunities at 1, 1 and 3 ms, repeating every 3 ms (so at 4, 4, 6,
	// then 7, 7, 9...). 1000-byte packets share and span opportunities.
	tr := mustTrace(t, "1\n1\n\n3\n")
	if tr.Period() != 3*ms || tr.MeanRateBps() != 3*1500*8/0.003 {
		t.Fatalf("period %v rate %v", tr.Period(), tr.MeanRateBps())
	}
	l := newTestLink(t, LinkConfig{Trace: tr, Delay: 10 * ms, RateBps: 1})
	for i := range 5 {
		l.Offer(0, packet(byte(i), 1000))
	}
	// 0: first 1000 of opp@1. 1: 500 of it + 500 of the second opp@1.
	// 2: the rest of that. 3: opp@3. 4: 500 of opp@3 + 500 of opp@4.
	checkArrivals(t, drain(l), []arrival{{0, 11 * ms}, {1, 11 * ms}, {2, 11 * ms}, {3, 13 * ms}, {4, 14 * ms}})
}

func TestTraceExpiryAndWrap(t *testing.T) {
	l := newTestLink(t, LinkConfig{Trace: mustTrace(t, "1\n1\n3\n")})
	l.Offer(0, packet(0, 100)) // opp@1, 1400 bytes left unused
	l.Offer(2*ms, packet(1, 100))
	l.Offer(6*ms, packet(2, 1500)) // cycle 1's last opportunity is at 6 ms
	l.Offer(6*ms, packet(3, 1500)) // next: cycle 2's first, at 7 ms
	l.Offer(10*ms, packet(4, 3000))
	// 1 arrives at 3 ms: the rest of opp@1 expired. 4 spans opportunities
	// at 10 and 10 ms (cycle 3: 10, 10, 12).
	checkArrivals(t, drain(l), []arrival{{0, 1 * ms}, {1, 3 * ms}, {2, 6 * ms}, {3, 7 * ms}, {4, 10 * ms}})
}

func TestTraceEndsWithRepeatedOffsets(t *testing.T) {
	// Two opportunities at the period's end: at 10 ms both belong to cycle
	// 0, and cycle 1 starts with 15 ms.
	l := newTestLink(t, LinkConfig{Trace: mustTrace(t, "5\n10\n10\n")})
	for i := range 3 {
		l.Offer(10*ms, packet(byte(i), 1500))
	}
	checkArrivals(t, drain(l), []arrival{{0, 10 * ms}, {1, 10 * ms}, {2, 15 * ms}})
}

func TestParseMahimahiErrors(t *testing.T) {
	for text, want := range map[string]string{
		"":              "no delivery opportunity",
		"\n \n":         "no delivery opportunity",
		"0\n0\n":        "non-zero time",
		"5\n3\n":        "entry 1 (3 ms) comes before entry 0 (5 ms)",
		"1\nx\n":        `line 2: "x" is not a millisecond count`,
		"-1\n":          `line 1: "-1" is not a millisecond count`,
		"1.5\n":         `"1.5" is not a millisecond count`,
		"99999999999\n": "is not a millisecond count",
	} {
		_, err := ParseMahimahi(strings.NewReader(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseMahimahi(%q) = %v, want error containing %q", text, err, want)
		}
	}
}

func TestTraceFirstAtOrAfter(t *testing.T) {
	tr := mustTrace(t, "0\n2\n2\n4\n")
	for now, want := range map[time.Duration]time.Duration{
		0: 0, 1: 2 * ms, 2 * ms: 2 * ms, 3 * ms: 4 * ms, 4 * ms: 4 * ms, 4*ms + 1: 6 * ms, 8 * ms: 8 * ms, 400*ms + 1: 402 * ms,
	} {
		if got := tr.at(tr.firstAtOrAfter(now)); got != want {
			t.Errorf("firstAtOrAfter(%v) = %v, want %v", now, got, want)
		}
	}
}
