package fec

import (
	"math"
	"testing"
)

// repairsAfter feeds n sources starting at ESI first and returns what the
// controller asked for after each.
func repairsAfter(c Controller, first uint32, n int) []int {
	out := make([]int, n)
	for i := range n {
		out[i] = c.OnSource(first + uint32(i))
	}
	return out
}

func totalRepairs(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

func TestFixedControllerSpreadsRepairsEvenly(t *testing.T) {
	cases := []struct {
		k, r int
		want []int
	}{
		{4, 2, []int{0, 1, 0, 1, 0, 1, 0, 1}},
		{3, 1, []int{0, 0, 1, 0, 0, 1}},
		{1, 2, []int{2, 2, 2}},
		{5, 3, []int{0, 1, 0, 1, 1, 0, 1, 0, 1, 1}},
		{4, 0, []int{0, 0, 0, 0, 0}},
	}
	for _, tc := range cases {
		c, err := NewFixedController(FixedConfig{Sources: tc.k, Repairs: tc.r})
		if err != nil {
			t.Fatal(err)
		}
		got := repairsAfter(c, 0, len(tc.want))
		for i := range got {
			if got[i] != tc.want[i] {
				t.Fatalf("%d:%d: repairs after each source %v, want %v", tc.k, tc.r, got, tc.want)
			}
		}
		if c.Window() != tc.k {
			t.Errorf("%d:%d: default window %d, want %d", tc.k, tc.r, c.Window(), tc.k)
		}
		if c.OnFeedback(Feedback{Sources: 10, Lost: 10, Unrecovered: 10}) != 0 || c.FeedbackPolicy().Wants() {
			t.Errorf("%d:%d: a fixed controller reacted to or asked for feedback", tc.k, tc.r)
		}
	}
	c, err := NewFixedController(FixedConfig{Sources: 20, Repairs: 1, Window: 60})
	if err != nil {
		t.Fatal(err)
	}
	if got := totalRepairs(repairsAfter(c, 0, 1000)); got != 50 || c.Window() != 60 {
		t.Errorf("20:1 window 60: %d repairs per 1000 sources, window %d; want 50 and 60", got, c.Window())
	}
}

func TestFixedControllerRejectsBadConfig(t *testing.T) {
	for _, cfg := range []FixedConfig{
		{Sources: 0, Repairs: 1},
		{Sources: 4, Repairs: -1},
		{Sources: 4, Repairs: 1, Window: -3},
		{Sources: 4, Repairs: 1, Window: 5000},
	} {
		if _, err := NewFixedController(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func TestHIRTControllerFollowsTheSimulatorRule(t *testing.T) {
	c, err := NewHIRTController(HIRTConfig{InitialLoss: 0.005})
	if err != nil {
		t.Fatal(err)
	}
	// mu = max(0.005, 1/200) = 0.005, sigma = 0: rate 3*0.005, step
	// ceil(1/0.015) = 67.
	if c.Step() != 67 || c.Window() != 200 || c.FeedbackPolicy() != (FeedbackPolicy{Interval: 500}) {
		t.Fatalf("initial step %d window %d policy %+v, want 67, 200, every 500", c.Step(), c.Window(), c.FeedbackPolicy())
	}
	got := repairsAfter(c, 0, 134)
	for i, n := range got {
		want := 0
		if i == 66 || i == 133 {
			want = 1
		}
		if n != want {
			t.Fatalf("source %d: %d repairs, want %d", i, n, want)
		}
	}
	// local 5/500 = 0.01: sigma = 0.1*|0.005-0.01| = 0.0005,
	// mu = 0.9*0.005 + 0.1*0.01 = 0.0055; rate 3*(0.0055+3*0.0005) = 0.021,
	// step ceil(47.62) = 48.
	if n := c.OnFeedback(Feedback{Sources: 500, Lost: 5, Unrecovered: 5}); n != 0 {
		t.Errorf("HIRT reacted to a report with %d repairs", n)
	}
	mu, sigma := c.Estimate()
	if math.Abs(mu-0.0055) > 1e-12 || math.Abs(sigma-0.0005) > 1e-12 || c.Step() != 48 {
		t.Errorf("after one report mu %v sigma %v step %d, want 0.0055, 0.0005, 48", mu, sigma, c.Step())
	}
	// A loss-free stretch lowers both estimates geometrically.
	for range 3 {
		c.OnFeedback(Feedback{Sources: 500})
	}
	mu, _ = c.Estimate()
	if math.Abs(mu-0.0055*0.729) > 1e-12 {
		t.Errorf("after three clean reports mu %v, want %v", mu, 0.0055*0.729)
	}
}

func TestHIRTControllerSaturatesAtOneRepairPerSource(t *testing.T) {
	c, err := NewHIRTController(HIRTConfig{InitialLoss: 0.5, Beta: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := repairsAfter(c, 0, 5); totalRepairs(got) != 5 {
		t.Errorf("rate above 1: repairs %v, want one after every source", got)
	}
}

func TestHIRTControllerRejectsBadConfig(t *testing.T) {
	for _, cfg := range []HIRTConfig{
		{Alpha: 1},
		{Alpha: -0.1},
		{Beta: -1},
		{Beta: math.Inf(1)},
		{Window: 4096},
		{Interval: -5},
		{InitialLoss: 1.5},
		{InitialLoss: math.NaN()},
	} {
		if _, err := NewHIRTController(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func TestAdaptiveControllerPlansFromItsPrior(t *testing.T) {
	c, err := NewAdaptiveController(AdaptiveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// Prior: 1% loss, bursts of 1. rate = (0.01 + 2*sqrt(0.01/256))/0.99
	// = 0.0225/0.99; the coverage window 1.5/rate = 66 is below the
	// minimum 256.
	if want := 0.0225 / 0.99; math.Abs(c.Rate()-want) > 1e-12 || c.Window() != 256 {
		t.Fatalf("prior plan rate %v window %d, want %v and 256", c.Rate(), c.Window(), want)
	}
	if got := totalRepairs(repairsAfter(c, 0, 1000)); got != 22 {
		t.Errorf("%d repairs for 1000 sources at rate %v, want 22", got, c.Rate())
	}
	want := FeedbackPolicy{Interval: 200, OnLossRun: true, Horizon: 4095}
	if c.FeedbackPolicy() != want {
		t.Errorf("policy %+v, want %+v", c.FeedbackPolicy(), want)
	}
}

func TestAdaptiveControllerLearnsLossAndBursts(t *testing.T) {
	c, err := NewAdaptiveController(AdaptiveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	// 100,000 sources at 2% loss in bursts of 4 wash out the prior.
	for range 500 {
		c.OnFeedback(Feedback{Sources: 200, Lost: 4, Bursts: 1, MaxBurst: 4})
	}
	loss, burst := c.Estimate()
	if math.Abs(loss-0.02) > 1e-4 || math.Abs(burst-4) > 0.01 {
		t.Fatalf("estimates loss %v burst %v, want 0.02 and 4", loss, burst)
	}
	// Bursts of 4: B90 = 1 + ln 0.1 / ln 0.75 = 9.0; the window must give
	// each source 1.5*B90 repairs.
	b90 := 1 + math.Log(0.1)/math.Log(0.75)
	if covered := float64(c.Window()) * c.Rate(); covered < 1.5*b90-0.05 {
		t.Errorf("window %d * rate %v = %v repairs per source, want >= %v", c.Window(), c.Rate(), covered, 1.5*b90)
	}
	wantRate := (loss + 2*math.Sqrt(loss*(2*burst-1)/float64(c.Window()))) / (1 - loss)
	if math.Abs(c.Rate()-wantRate) > 2e-3 {
		t.Errorf("rate %v, want about %v for window %d", c.Rate(), wantRate, c.Window())
	}
}

// TestAdaptiveControllerCleanPathWindow: once clean reports wash out the
// prior, proactive repairs come less than once per largest window, and the
// window of the tail repairs that remain falls to the minimum; a little
// loss brings the coverage window back.
func TestAdaptiveControllerCleanPathWindow(t *testing.T) {
	c, err := NewAdaptiveController(AdaptiveConfig{MaxWindow: 1024})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		c.OnFeedback(Feedback{Sources: 200})
	}
	if c.Rate()*1024 >= 1 || c.Window() != 256 {
		t.Fatalf("clean path: rate %v window %d, want fewer than one repair per 1024 sources and the minimum 256", c.Rate(), c.Window())
	}
	// 0.1% loss: about 1.5 repairs per window of some 400 sources.
	for range 200 {
		c.OnFeedback(Feedback{Sources: 1000, Lost: 1, Bursts: 1, MaxBurst: 1})
	}
	if w := c.Window(); w <= 256 || float64(w)*c.Rate() < 1.5-0.05 {
		t.Errorf("0.1%% loss: window %d rate %v, want a window above the minimum covering 1.5 losses", w, c.Rate())
	}
}

func TestAdaptiveControllerReactsToWhatIsMissing(t *testing.T) {
	c, err := NewAdaptiveController(AdaptiveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	proactive := repairsAfter(c, 0, 400)
	planned := c.Window()
	// The receiver had seen up to ESI 399 and misses 2 sources, the
	// oldest 10. Nothing it had not seen was in flight but the repairs of
	// source 399 itself.
	fb := Feedback{FirstESI: 200, Sources: 200, Lost: 2, Bursts: 1, MaxBurst: 2, Unrecovered: 2, OldestUnrecovered: 10, LossRun: true}
	n := c.OnFeedback(fb)
	loss, _ := c.Estimate()
	want := int(math.Ceil(2/(1-loss) - float64(proactive[399]) - 0.1))
	if n != want {
		t.Fatalf("reaction %d repairs, want %d", n, want)
	}
	if c.Window() != 390 {
		t.Errorf("window during the reaction %d, want 390 (back to ESI 10)", c.Window())
	}
	// A report written at ESI 300 sees every repair sent after source
	// 300's, the reaction included, as in flight.
	inflight := totalRepairs(proactive[300:]) + n
	fb = Feedback{FirstESI: 300, Sources: 1, Unrecovered: inflight + 3, OldestUnrecovered: 10}
	got := c.OnFeedback(fb)
	loss, _ = c.Estimate()
	if want := int(math.Ceil(float64(inflight+3)/(1-loss) - float64(inflight) - 0.1)); got != want {
		t.Errorf("second reaction %d repairs, want %d", got, want)
	}
	// All recovered: the window returns to the plan.
	c.OnFeedback(Feedback{FirstESI: 400, Sources: 1})
	if c.Window() != planned {
		t.Errorf("window after recovery %d, want %d", c.Window(), planned)
	}
}

func TestAdaptiveControllerGivesUpOutOfReach(t *testing.T) {
	c, err := NewAdaptiveController(AdaptiveConfig{MinWindow: 64, MaxWindow: 300, MaxReaction: 5})
	if err != nil {
		t.Fatal(err)
	}
	repairsAfter(c, 0, 1000)
	if n := c.OnFeedback(Feedback{FirstESI: 999, Sources: 1, Unrecovered: 1, OldestUnrecovered: 600}); n != 0 {
		t.Errorf("reacted with %d repairs to a loss 400 sources back, beyond the window 300", n)
	}
	if n := c.OnFeedback(Feedback{FirstESI: 999, Sources: 1, Unrecovered: 50, OldestUnrecovered: 900}); n != 5 {
		t.Errorf("reaction to 50 missing with MaxReaction 5: %d repairs", n)
	}
	planned := c.planned()
	if planned != 64 || c.Window() != 100 {
		t.Errorf("window reaching back to 900 from 999: %d (planned %d), want 100 (64)", c.Window(), planned)
	}
	// At ESI 1249 the missing 900 is 350 back, beyond 300: the reaction
	// is abandoned and the window returns to the planned 64.
	repairsAfter(c, 1000, 250)
	if c.Window() != 64 {
		t.Errorf("window %d after the missing source fell out of reach, want 64", c.Window())
	}
}

// TestAdaptiveControllerOnMissing: between reports, the reaction's
// window follows the oldest source still missing, and returns to the plan
// when none is; OnMissing never starts a reaction.
func TestAdaptiveControllerOnMissing(t *testing.T) {
	c, err := NewAdaptiveController(AdaptiveConfig{MinWindow: 64, MaxWindow: 1000})
	if err != nil {
		t.Fatal(err)
	}
	repairsAfter(c, 0, 1000)
	c.OnMissing(700, true)
	if c.Window() != 64 {
		t.Fatalf("window %d after OnMissing without a reaction, want the planned 64", c.Window())
	}
	c.OnFeedback(Feedback{FirstESI: 999, Sources: 1, Unrecovered: 2, OldestUnrecovered: 800})
	if c.Window() != 200 {
		t.Fatalf("window reaching back to 800 from 999: %d, want 200", c.Window())
	}
	c.OnMissing(700, true) // older than the reaction's: no wider
	if c.Window() != 200 {
		t.Errorf("window %d after an older missing source, want 200", c.Window())
	}
	c.OnMissing(900, true) // 800 was rebuilt, 900 is still missing
	if c.Window() != 100 {
		t.Errorf("window %d reaching back to 900, want 100", c.Window())
	}
	c.OnMissing(0, false)
	if c.Window() != 64 {
		t.Errorf("window %d with nothing missing, want the planned 64", c.Window())
	}
}

func TestAdaptiveControllerRejectsBadConfig(t *testing.T) {
	for _, cfg := range []AdaptiveConfig{
		{Interval: -1},
		{MinWindow: 500, MaxWindow: 100},
		{MaxWindow: 5000},
		{Memory: -1},
		{Z: -1},
		{Coverage: math.NaN()},
		{InitialLoss: 1},
		{InitialBurst: 0.5},
		{MaxReaction: -2},
	} {
		if _, err := NewAdaptiveController(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestControllersSurviveMalformedFeedback feeds reports no receiver would
// write: the controllers must stay finite and within their bounds.
func TestControllersSurviveMalformedFeedback(t *testing.T) {
	bad := []Feedback{
		{Sources: 100, Lost: -50, Bursts: -3},
		{Sources: 10, Lost: 1 << 30, Bursts: 1 << 30, MaxBurst: -1},
		{Sources: -10, Lost: 5},
		{Sources: 1, Lost: 1, Bursts: 0, Unrecovered: -7},
		{Sources: 1 << 30, Lost: 1 << 30, Bursts: 1, Unrecovered: 1 << 30, OldestUnrecovered: 3},
	}
	hirt, err := NewHIRTController(HIRTConfig{})
	if err != nil {
		t.Fatal(err)
	}
	adaptive, err := NewAdaptiveController(AdaptiveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	repairsAfter(adaptive, 0, 10)
	for _, fb := range bad {
		if n := hirt.OnFeedback(fb); n != 0 {
			t.Errorf("HIRT reacted to %+v", fb)
		}
		mu, sigma := hirt.Estimate()
		if math.IsNaN(mu) || mu < 0 || mu > 1 || math.IsNaN(sigma) || sigma < 0 || hirt.Step() < 1 {
			t.Errorf("HIRT after %+v: mu %v sigma %v step %d", fb, mu, sigma, hirt.Step())
		}
		n := adaptive.OnFeedback(fb)
		loss, burst := adaptive.Estimate()
		if n < 0 || n > 64 || math.IsNaN(loss) || loss < 0 || loss > 1 || burst < 1 ||
			!(adaptive.Rate() >= 0 && adaptive.Rate() <= 1) || adaptive.Window() < 1 || adaptive.Window() > 4095 {
			t.Errorf("adaptive after %+v: %d repairs, loss %v burst %v rate %v window %d", fb, n, loss, burst, adaptive.Rate(), adaptive.Window())
		}
		if got := totalRepairs(repairsAfter(adaptive, 10, 10)); got > 10 {
			t.Errorf("adaptive after %+v: %d repairs for 10 sources", fb, got)
		}
	}
}

// TestAdaptiveControllerLeansOnProactiveRepairsWhenFeedbackIsFar: when
// reports come back more than half the largest window after the sources
// they describe, reactions cannot reach them, so the proactive rate rises
// from Z to FarZ standard deviations.
func TestAdaptiveControllerLeansOnProactiveRepairsWhenFeedbackIsFar(t *testing.T) {
	run := func(lag uint32) float64 {
		c, err := NewAdaptiveController(AdaptiveConfig{MaxWindow: 1000})
		if err != nil {
			t.Fatal(err)
		}
		esi := uint32(0)
		for range 200 {
			for range 200 {
				c.OnSource(esi)
				esi++
			}
			first := esi - 200 - lag
			if esi < 200+lag {
				continue
			}
			c.OnFeedback(Feedback{FirstESI: first, Sources: 200, Lost: 2, Bursts: 1, MaxBurst: 2})
		}
		return c.Rate()
	}
	near, far := run(100), run(800)
	if !(far > near*1.2) {
		t.Fatalf("rate with feedback 800 sources late %v, with 100 late %v: want the far one clearly higher", far, near)
	}
}
