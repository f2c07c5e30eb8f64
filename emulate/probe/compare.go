//go:build linux

package probe

import (
	"fmt"
	"math"
	"time"

	"github.com/satquic/satquic/netsim"
)

// Check is one comparison of a measurement with the link model.
type Check struct {
	Name     string `json:"name"`
	Measured string `json:"measured"`
	Expected string `json:"expected"`
	// Pass is the verdict; a check without one (Skipped) says why in
	// Expected.
	Pass    bool `json:"pass"`
	Skipped bool `json:"skipped,omitempty"`
}

// Tolerances of the checks.
const (
	// RateTolerance is how far the delivered rate may stray from the
	// model's, as a fraction.
	RateTolerance = 0.02
	// DelayTolerance is how much delay the emulator may add beyond the
	// model's at the 99th percentile.
	DelayTolerance = time.Millisecond
	// z99 is the two-sided 99% quantile of the normal distribution.
	z99 = 2.5758
	// minBurstsForTest is the fewest loss runs a distribution test needs.
	minBurstsForTest = 30
)

// Compare checks a measurement against one direction of the link model:
// the delivered rate, the delay added beyond the model's, the loss rate
// against its 99% confidence interval, and the loss-run lengths against
// the model's distribution (chi-square test at the 1% level).
func Compare(r *Result, link netsim.LinkConfig) []Check {
	c, markov := modelChain(link.Loss)
	saturated := link.RateBps > 0 && r.OfferedBps >= 0.9*link.RateBps
	checks := []Check{rateCheck(r, link), delayCheck(r, link, saturated)}
	if !markov {
		return append(checks, skipped("loss rate", "the loss model is not uniform or Gilbert-Elliott"))
	}
	if saturated {
		return append(checks, skipped("loss rate", "offered rate near the link rate: queue drops mix with model losses"))
	}
	return append(checks, lossCheck(r, c), burstCheck(r, c))
}

func skipped(name, why string) Check {
	return Check{Name: name, Expected: why, Skipped: true}
}

func mbps(v float64) string { return fmt.Sprintf("%.3f Mbit/s", v/1e6) }

// rateCheck: a saturated link delivers its rate; an unsaturated one what
// was offered, less what was lost (as measured, so that the loss model's
// randomness does not blur the rate check).
func rateCheck(r *Result, link netsim.LinkConfig) Check {
	if link.Trace != nil || len(link.RateSchedule) > 0 {
		return skipped("delivered rate", "the rate varies (trace or schedule)")
	}
	want := r.OfferedBps * (1 - r.LossRate)
	if link.RateBps > 0 && link.RateBps < r.OfferedBps {
		want = link.RateBps
	}
	dev := r.DeliveredBps/want - 1
	return Check{
		Name:     "delivered rate",
		Measured: fmt.Sprintf("%s (%+.2f%%)", mbps(r.DeliveredBps), 100*dev),
		Expected: fmt.Sprintf("%s +- %.0f%%", mbps(want), 100*RateTolerance),
		Pass:     math.Abs(dev) <= RateTolerance,
	}
}

// baseDelay is the model's one-way delay through an empty queue:
// propagation plus serialization of one datagram.
func baseDelay(link netsim.LinkConfig, size int) time.Duration {
	d := link.Delay
	if link.RateBps > 0 {
		d += time.Duration(float64((size+Overhead)*8) / link.RateBps * float64(time.Second))
	}
	return d
}

func delayCheck(r *Result, link netsim.LinkConfig, saturated bool) Check {
	name := "added one-way delay"
	switch {
	case saturated:
		return skipped(name, "offered rate near the link rate: the queue adds delay")
	case link.Jitter > 0 || len(link.DelaySteps) > 0:
		return skipped(name, "the model's delay varies (jitter or steps)")
	case r.Received == 0:
		return skipped(name, "nothing arrived")
	}
	base := baseDelay(link, r.Size)
	added := func(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d-base)/1e6) }
	return Check{
		Name: name,
		Measured: fmt.Sprintf("min %s, p50 %s, p99 %s, max %s ms over %v",
			added(r.DelayMin), added(r.DelayP50), added(r.DelayP99), added(r.DelayMax), base),
		Expected: fmt.Sprintf("0 <= added, p99 <= %v", DelayTolerance),
		// The model never delivers early; the probe's own clock reads
		// are a few microseconds apart, hence the small allowance.
		Pass: r.DelayMin >= base-20*time.Microsecond && r.DelayP99-base <= DelayTolerance,
	}
}

// lossCheck: the measured rate lies in the 99% confidence interval of the
// model's mean, widened by the correlation of Gilbert-Elliott losses.
func lossCheck(r *Result, c chain) Check {
	m := c.mean()
	half := z99 * math.Sqrt(c.varianceFactor()*m*(1-m)/float64(r.Sent))
	return Check{
		Name:     "loss rate",
		Measured: fmt.Sprintf("%.4f%% (%d of %d)", 100*r.LossRate, r.Lost, r.Sent),
		Expected: fmt.Sprintf("%.4f%% +- %.4f%% (99%% CI)", 100*m, 100*half),
		Pass:     math.Abs(r.LossRate-m) <= half+1e-12,
	}
}

// burstCheck compares loss-run lengths with the model's distribution by a
// chi-square goodness-of-fit test, merging the tail so that every bin
// expects at least 5 runs.
func burstCheck(r *Result, c chain) Check {
	name := "loss-run lengths"
	total := 0
	for _, k := range r.Bursts {
		total += k
	}
	if total < minBurstsForTest {
		return skipped(name, fmt.Sprintf("%d loss runs, fewer than the %d a test needs", total, minBurstsForTest))
	}
	probs, _ := c.runLengths(1000)
	var observed, expected []float64
	rest := float64(total)
	obsRest := float64(total)
	for n := 1; n <= len(probs); n++ {
		e := float64(total) * probs[n-1]
		if rest-e < 5 || e < 5 {
			break
		}
		observed = append(observed, float64(r.Bursts[n]))
		expected = append(expected, e)
		rest -= e
		obsRest -= float64(r.Bursts[n])
	}
	observed, expected = append(observed, obsRest), append(expected, rest)
	chi2 := 0.0
	for i := range observed {
		d := observed[i] - expected[i]
		chi2 += d * d / expected[i]
	}
	df := len(observed) - 1
	if df < 1 {
		return skipped(name, fmt.Sprintf("%d loss runs are too few to compare lengths (a test needs 5 expected in each of two bins)", total))
	}
	p := chiSquareP(chi2, df)
	return Check{
		Name: name,
		Measured: fmt.Sprintf("%d runs, mean %.3f, P(1..3) %s, chi2 %.2f (%d df), p = %.3f",
			total, meanRun(r.Bursts), headShares(r.Bursts, total), chi2, df, p),
		Expected: fmt.Sprintf("mean %.3f, P(1..3) %s; p >= 0.01", c.meanRun(), modelHead(probs)),
		Pass:     p >= 0.01,
	}
}

func meanRun(runs map[int]int) float64 {
	n, sum := 0, 0
	for length, k := range runs {
		n += k
		sum += length * k
	}
	if n == 0 {
		return 0
	}
	return float64(sum) / float64(n)
}

func headShares(runs map[int]int, total int) string {
	return fmt.Sprintf("%.3f/%.3f/%.3f", float64(runs[1])/float64(total), float64(runs[2])/float64(total), float64(runs[3])/float64(total))
}

func modelHead(probs []float64) string {
	return fmt.Sprintf("%.3f/%.3f/%.3f", probs[0], probs[1], probs[2])
}
