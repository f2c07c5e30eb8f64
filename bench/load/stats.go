package load

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds, from 1 µs to maxLatency, with
// three significant digits: a percentile is off by at most 0.1%.
const (
	maxLatencyUs = int64(10 * time.Minute / time.Microsecond)
	sigFigs      = 3
)

// stats are one worker's counts in a phase, merged at the end. A
// worker's latencies go to the phase's latencySink in batches; the
// merged total holds them in hist.
type stats struct {
	hist     *hdrhistogram.Histogram
	sink     *latencySink
	pending  []int64 // latencies in µs not yet in sink
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

// newWorkerStats returns a worker's counts, whose latencies go to sink.
func newWorkerStats(sink *latencySink) *stats {
	return &stats{
		sink:     sink,
		pending:  make([]int64, 0, latencyBatch),
		byKind:   map[string]int64{},
		firstErr: map[string]string{},
	}
}

// latencyBatch is how many latencies a worker gathers before it adds
// them to the phase's histogram.
const latencyBatch = 256

// latencySink is the latency histogram the workers of a phase share.
// Each adds a batch at a time under the lock, so that the histogram's
// few busy counts stay in the processor's cache, where a histogram per
// worker (hundreds of them, 360 kB each) missed it on every request.
type latencySink struct {
	mu   sync.Mutex
	hist *hdrhistogram.Histogram
}

func newLatencySink() *latencySink {
	return &latencySink{hist: hdrhistogram.New(1, maxLatencyUs, sigFigs)}
}

func (l *latencySink) add(us []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range us {
		_ = l.hist.RecordValue(v)
	}
}

func (l *latencySink) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hist.Reset()
}

// flush adds the latencies gathered to the sink.
func (s *stats) flush() {
	if len(s.pending) > 0 {
		s.sink.add(s.pending)
		s.pending = s.pending[:0]
	}
}

func (s *stats) reset() {
	if s.hist != nil {
		s.hist.Reset()
	}
	s.pending = s.pending[:0]
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
	us = min(us, maxLatencyUs)
	if s.sink == nil {
		_ = s.hist.RecordValue(us)
		return
	}
	s.pending = append(s.pending, us)
	if len(s.pending) == cap(s.pending) {
		s.flush()
	}
}

// merge adds o's counts to s; a worker's latencies are in its sink.
func (s *stats) merge(o *stats) {
	if o.hist != nil {
		s.hist.Merge(o.hist)
	}
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
