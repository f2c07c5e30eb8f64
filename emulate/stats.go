//go:build linux

package emulate

import (
	"time"

	"github.com/satquic/satquic/netsim"
)

// Stats is a snapshot of an emulator's counters, as printed by
// "satquic emulate --stats".
type Stats struct {
	Mode     string  `json:"mode"`
	ElapsedS float64 `json:"elapsed_s"`
	Flows    int     `json:"flows,omitempty"`
	// HighPriority reports that every packet thread runs at high
	// priority; without it (no privileges) timing suffers on a busy host.
	HighPriority bool           `json:"high_priority"`
	Up           DirectionStats `json:"up"`
	Down         DirectionStats `json:"down"`
}

// DirectionStats reports one direction: the link model's fate of every
// packet, and the emulator's own timing. Times are in milliseconds.
type DirectionStats struct {
	Offered        int64 `json:"offered"`
	OfferedBytes   int64 `json:"offered_bytes"`
	Delivered      int64 `json:"delivered"`
	DeliveredBytes int64 `json:"delivered_bytes"`
	DroppedLoss    int64 `json:"dropped_loss"`
	DroppedQueue   int64 `json:"dropped_queue"`
	DroppedOutage  int64 `json:"dropped_outage"`
	DroppedMTU     int64 `json:"dropped_mtu"`
	Duplicated     int64 `json:"duplicated"`
	Corrupted      int64 `json:"corrupted"`
	CEMarked       int64 `json:"ce_marked"`
	InFlight       int64 `json:"in_flight"`
	MaxQueueBytes  int   `json:"max_queue_bytes"`

	QueueDelayP50 float64 `json:"queue_delay_p50_ms"`
	QueueDelayP99 float64 `json:"queue_delay_p99_ms"`
	QueueDelayMax float64 `json:"queue_delay_max_ms"`

	// Sent are the packets written to the kernel; Delivered minus Sent are
	// the ones the emulator could not pass on (see the counters below).
	Sent      uint64 `json:"sent"`
	SentBytes uint64 `json:"sent_bytes"`
	// Late counts packets written more than LateThreshold after their due
	// time: the emulator falling behind the model.
	Late        uint64  `json:"late"`
	LatenessP50 float64 `json:"lateness_p50_ms"`
	LatenessP99 float64 `json:"lateness_p99_ms"`
	LatenessMax float64 `json:"lateness_max_ms"`
	// Sojourn is arrival to departure in relay mode, where the arrival
	// time travels with the packet.
	SojournP50 float64 `json:"sojourn_p50_ms,omitempty"`
	SojournP99 float64 `json:"sojourn_p99_ms,omitempty"`

	SendErrors uint64 `json:"send_errors"`
	// Undeliverable packets left the link but had nowhere to go: their flow
	// expired, their relay trailer was corrupted, or they were marked CE
	// without being ECN-capable.
	Undeliverable uint64 `json:"undeliverable"`
	// Oversize packets were larger than the emulator reads and never
	// reached the link.
	Oversize       uint64 `json:"oversize"`
	InternalErrors uint64 `json:"internal_errors,omitempty"`
}

func highPriority(dirs ...*direction) bool {
	for _, d := range dirs {
		if n := d.stats.threads.Load(); n == 0 || d.stats.priorityThreads.Load() != n {
			return false
		}
	}
	return true
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// snapshot combines the link model's counters with the emulator's own.
func (d *direction) snapshot() DirectionStats {
	ls := d.linkStats()
	out := fromLinkStats(ls)
	s := d.stats
	out.Sent, out.SentBytes = s.sentPackets.Load(), s.sentBytes.Load()
	out.Late = s.late.Load()
	out.SendErrors = s.sendErrors.Load()
	out.Undeliverable = s.undeliverable.Load()
	out.Oversize = s.oversize.Load()
	out.InternalErrors = s.internalErrors.Load()
	s.mu.Lock()
	defer s.mu.Unlock()
	out.LatenessP50, out.LatenessP99 = ms(s.lateness.quantile(0.5)), ms(s.lateness.quantile(0.99))
	out.LatenessMax = ms(s.lateness.max)
	out.SojournP50, out.SojournP99 = ms(s.sojourn.quantile(0.5)), ms(s.sojourn.quantile(0.99))
	return out
}

func fromLinkStats(ls netsim.LinkStats) DirectionStats {
	return DirectionStats{
		Offered: ls.Offered, OfferedBytes: ls.OfferedBytes,
		Delivered: ls.Delivered, DeliveredBytes: ls.DeliveredBytes,
		DroppedLoss: ls.DroppedLoss, DroppedQueue: ls.DroppedQueue,
		DroppedOutage: ls.DroppedOutage, DroppedMTU: ls.DroppedMTU,
		Duplicated: ls.Duplicated, Corrupted: ls.Corrupted, CEMarked: ls.CEMarked,
		InFlight: ls.InFlight, MaxQueueBytes: ls.MaxQueueBytes,
		QueueDelayP50: ms(ls.QueueDelayP50), QueueDelayP99: ms(ls.QueueDelayP99),
		QueueDelayMax: ms(ls.QueueDelayMax),
	}
}
