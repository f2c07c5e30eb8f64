package load

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, from 1 µs to maxLatency, with
// three significant digits: a percentile is off by at most 0.1%.
const (
	maxLatencyUs = int64(10 * time.Minute / time.Microsecond)
	sigFigs      = 3
)

// stats are one worker's counts in a phase, merged at the end.
type stats struct {
	hist     *hdrhistogram.Histogram
	ok       int64
	failed   int64
	cut      int64
	bytes    int64
	byKind   map[string]int64
	firstErr map[string]string
}

func newStats() *stats {
	return &stats{
		hist:     hdrhistogram.New(1, maxLatencyUs, sigFigs),
		byKind:   map[string]int64{},
		firstErr: map[string]string{},
	}
}

func (s *stats) reset() {
	s.hist.Reset()
	s.ok, s.failed, s.cut, s.bytes = 0, 0, 0, 0
	clear(s.byKind)
	clear(s.firstErr)
}

// record counts one finished request; kind is empty for a success, whose
// latency goes into the histogram.
func (s *stats) record(lat time.Duration, n int64, kind string, err error) {
	s.bytes += n
	if kind != "" {
		s.failed++
		s.byKind[kind]++
		if _, ok := s.firstErr[kind]; !ok {
			s.firstErr[kind] = err.Error()
		}
		return
	}
	s.ok++
	us := max(int64(lat/time.Microsecond), 1)
	// A latency beyond the range is recorded as the range's top, which
	// Timeout keeps far from.
	_ = s.hist.RecordValue(min(us, maxLatencyUs))
}

func (s *stats) merge(o *stats) {
	s.hist.Merge(o.hist)
	s.ok += o.ok
	s.failed += o.failed
	s.cut += o.cut
	s.bytes += o.bytes
	for k, v := range o.byKind {
		s.byKind[k] += v
	}
	for k, v := range o.firstErr {
		if _, ok := s.firstErr[k]; !ok {
			s.firstErr[k] = v
		}
	}
}

// result summarizes the merged counts of a phase that took elapsed and
// opened conns connections.
func (s *stats) result(elapsed time.Duration, conns int64) *Result {
	r := &Result{
		Seconds:        elapsed.Seconds(),
		Requests:       s.ok + s.failed,
		Succeeded:      s.ok,
		Errors:         s.failed,
		Unfinished:     s.cut,
		ErrorsByKind:   map[string]int64{},
		ErrorExamples:  map[string]string{},
		Connections:    conns,
		Bytes:          s.bytes,
		LatencyMs:      latencyOf(s.hist),
		LatencySamples: s.hist.TotalCount(),
	}
	for k, v := range s.byKind {
		r.ErrorsByKind[k] = v
	}
	for k, v := range s.firstErr {
		r.ErrorExamples[k] = v
	}
	if secs := elapsed.Seconds(); secs > 0 {
		r.RequestsPerSecond = float64(s.ok) / secs
		r.ConnectionsPerSecond = float64(conns) / secs
		r.BytesPerSecond = float64(s.bytes) / secs
		r.Mbps = r.BytesPerSecond * 8 / 1e6
	}
	return r
}

func usToMs(us int64) float64 { return float64(us) / 1000 }

func latencyOf(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	return Latency{
		Min:    usToMs(h.Min()),
		Mean:   h.Mean() / 1000,
		StdDev: h.StdDev() / 1000,
		P50:    usToMs(h.ValueAtQuantile(50)),
		P90:    usToMs(h.ValueAtQuantile(90)),
		P99:    usToMs(h.ValueAtQuantile(99)),
		P999:   usToMs(h.ValueAtQuantile(99.9)),
		Max:    usToMs(h.Max()),
	}
}
