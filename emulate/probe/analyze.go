//go:build linux

package probe

import (
	"slices"
	"time"
)

// Result is what a measurement found.
type Result struct {
	Direction  string  `json:"direction"`
	Size       int     `json:"size"`
	OfferedBps float64 `json:"offered_bps"`

	Sent       int     `json:"sent"`
	Received   int     `json:"received"`
	Duplicates int     `json:"duplicates"`
	Lost       int     `json:"lost"`
	LossRate   float64 `json:"loss_rate"`
	// DeliveredBps is the arrival rate after the warm-up, counting the IP
	// and UDP headers as the link does.
	DeliveredBps float64 `json:"delivered_bps"`

	// One-way delay, send to receive, of the datagrams that arrived.
	DelayMin time.Duration `json:"delay_min_ns"`
	DelayP50 time.Duration `json:"delay_p50_ns"`
	DelayP90 time.Duration `json:"delay_p90_ns"`
	DelayP99 time.Duration `json:"delay_p99_ns"`
	DelayMax time.Duration `json:"delay_max_ns"`

	// Bursts counts loss runs by length: Bursts[n] runs of n datagrams
	// lost in a row.
	Bursts map[int]int `json:"bursts"`

	// SenderBehind is how late the paced sender ran at worst; HighPriority
	// reports that both probe threads had high priority.
	SenderBehind time.Duration `json:"sender_behind_ns"`
	// SenderSkipped is the sending time lost to the sender's own stalls
	// (datagrams it did not send late, to keep its rate smooth).
	SenderSkipped time.Duration `json:"sender_skipped_ns"`
	HighPriority  bool          `json:"high_priority"`

	delays []time.Duration // sorted, for Compare
}

func analyze(cfg Config, st sendStats, rec *receiver) *Result {
	r := &Result{
		Direction: "up", Size: cfg.Size, OfferedBps: cfg.RateBps, Sent: st.packets,
		SenderBehind: st.behind, SenderSkipped: st.skipped, HighPriority: st.highPriority && rec.highPriority,
		Bursts: map[int]int{},
	}
	if cfg.Down {
		r.Direction = "down"
	}
	seen := make([]bool, st.packets)
	for _, a := range rec.arrivals {
		if a.seq >= uint64(len(seen)) {
			continue
		}
		if seen[a.seq] {
			r.Duplicates++
			continue
		}
		seen[a.seq] = true
		r.Received++
		r.delays = append(r.delays, a.at-a.sent)
	}
	r.Lost = r.Sent - r.Received
	if r.Sent > 0 {
		r.LossRate = float64(r.Lost) / float64(r.Sent)
	}
	r.Bursts = lossRuns(seen)
	r.DeliveredBps = deliveredRate(rec.arrivals, cfg)
	r.summariseDelays()
	return r
}

// lossRuns counts runs of consecutive missing sequence numbers.
func lossRuns(seen []bool) map[int]int {
	runs := map[int]int{}
	run := 0
	for _, ok := range seen {
		if !ok {
			run++
			continue
		}
		if run > 0 {
			runs[run]++
		}
		run = 0
	}
	if run > 0 {
		runs[run]++
	}
	return runs
}

// deliveredRate is the arrival rate of the datagrams that arrived after the
// warm-up: bits between the first and the last of them over the time
// between.
func deliveredRate(arrivals []arrival, cfg Config) float64 {
	if len(arrivals) < 2 {
		return 0
	}
	from := arrivals[0].at + cfg.Warmup
	first := -1
	for i, a := range arrivals {
		if a.at >= from {
			first = i
			break
		}
	}
	last := len(arrivals) - 1
	if first < 0 || last <= first {
		return 0
	}
	span := arrivals[last].at - arrivals[first].at
	if span <= 0 {
		return 0
	}
	bits := float64((last - first) * (cfg.Size + Overhead) * 8)
	return bits / span.Seconds()
}

func (r *Result) summariseDelays() {
	if len(r.delays) == 0 {
		return
	}
	slices.Sort(r.delays)
	r.DelayMin, r.DelayMax = r.delays[0], r.delays[len(r.delays)-1]
	r.DelayP50, r.DelayP90, r.DelayP99 = quantile(r.delays, 0.5), quantile(r.delays, 0.9), quantile(r.delays, 0.99)
}

// quantile of sorted values, by the nearest-rank method.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
