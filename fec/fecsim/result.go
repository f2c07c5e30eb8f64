package fecsim

import (
	"math"
	"slices"
)

// Result is what one run measured. Ratios are fractions, not percents;
// delays are in packets sent.
type Result struct {
	Scheme     string  `json:"scheme"`
	Label      string  `json:"label"`
	Loss       string  `json:"loss"`
	LossMean   float64 `json:"loss_mean"`
	Packets    int     `json:"packets"`
	Warmup     int     `json:"warmup"`
	Seed       uint64  `json:"seed"`
	RTTPackets int     `json:"rtt_packets"`

	// Overhead is repairs per source over the whole stream.
	Overhead float64 `json:"overhead"`
	// RecoveredRatio is recovered / lost over the measured sources, 1
	// when none was lost.
	RecoveredRatio float64 `json:"recovered_ratio"`
	// ResidualLoss is the share of measured sources lost for good.
	ResidualLoss float64 `json:"residual_loss"`
	// RecoveryDelayP50 and P99 are percentiles of the packets sent
	// between a lost source and its recovery (0 when none recovered).
	RecoveryDelayP50 float64 `json:"recovery_delay_p50"`
	RecoveryDelayP99 float64 `json:"recovery_delay_p99"`
	// DecodeNsPerPacket is the decoder's time per packet it was given.
	// Calls longer than a millisecond (the thread was descheduled) are
	// left out and counted in DecodeOutliers.
	DecodeNsPerPacket float64 `json:"decode_ns_per_packet"`
	DecodeOutliers    int64   `json:"decode_outliers"`
	// ChannelLoss is the share of all packets (sources and repairs) the
	// channel dropped.
	ChannelLoss float64 `json:"channel_loss"`

	SourcesSent     int64 `json:"sources_sent"`
	RepairsSent     int64 `json:"repairs_sent"`
	Lost            int64 `json:"lost"`
	Recovered       int64 `json:"recovered"`
	FeedbackReports int64 `json:"feedback_reports"`
	// Mismatches counts recovered packets whose bytes differ from the
	// original, or that were never lost or recovered twice: must be 0.
	Mismatches int64 `json:"mismatches"`
	// DecodeErrors counts repairs the decoder rejected: must be 0 on
	// this error-free channel.
	DecodeErrors int64 `json:"decode_errors"`
}

// result computes the run's Result from its counters.
func (s *simulation) result() Result {
	c := s.stats
	r := Result{
		Scheme:          s.cfg.Scheme.Name,
		Label:           s.cfg.Scheme.Label(),
		Loss:            s.model.String(),
		LossMean:        s.model.Mean(),
		Packets:         s.cfg.Packets,
		Warmup:          s.cfg.Warmup,
		Seed:            s.cfg.Seed,
		RTTPackets:      s.cfg.RTTPackets,
		SourcesSent:     c.sources,
		RepairsSent:     c.repairs,
		Lost:            c.measuredLost,
		Recovered:       c.measuredRecovered,
		FeedbackReports: c.report,
		Mismatches:      c.mismatches,
		DecodeErrors:    c.decodeErrors,
		RecoveredRatio:  1,
	}
	r.Overhead = ratio(c.repairs, c.sources)
	r.ChannelLoss = ratio(c.dropped, c.sources+c.repairs)
	if c.measuredLost > 0 {
		r.RecoveredRatio = ratio(c.measuredRecovered, c.measuredLost)
	}
	r.ResidualLoss = ratio(c.measuredLost-c.measuredRecovered, int64(s.cfg.Packets))
	r.RecoveryDelayP50 = percentile(s.delays, 0.50)
	r.RecoveryDelayP99 = percentile(s.delays, 0.99)
	r.DecodeOutliers = c.decodeOutliers
	if timed := c.decoderPackets - c.decodeOutliers; timed > 0 {
		r.DecodeNsPerPacket = float64(s.decodeT.Nanoseconds()) / float64(timed)
	}
	return r
}

func ratio(a, b int64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// percentile is the nearest-rank q-quantile of v (0 for no values); it
// sorts v.
func percentile(v []int64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	rank := int(math.Ceil(q * float64(len(v))))
	rank = min(max(rank, 1), len(v))
	return float64(v[rank-1])
}
