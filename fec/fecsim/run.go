package fecsim

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/netsim/loss"
)

// Run defaults.
const (
	DefaultPackets    = 100_000
	DefaultRTTPackets = 50
	DefaultMinPayload = 16
	DefaultMaxPayload = 160
	// DefaultDrain is the number of unmeasured sources sent after the
	// measured ones: more than the largest window plus a few round trips.
	DefaultDrain = 1500
)

// RunConfig describes one simulation run.
type RunConfig struct {
	Scheme SchemeConfig
	// Loss is a netsim/loss spec ("uniform:0.005", "ge:0.00151,0.3333").
	Loss string
	// Packets is the number of measured source packets (default 100,000).
	Packets int
	// Seed seeds the loss model and the payloads.
	Seed uint64
	// RTTPackets is the feedback delay in packets sent (default 50; a
	// negative value means 0: instant feedback).
	RTTPackets int
	// MinPayload and MaxPayload bound the random payload sizes (defaults
	// 16 and 160 bytes).
	MinPayload, MaxPayload int
	// Warmup is the number of unmeasured sources before the measured
	// ones, for a steady-state measurement on fewer packets (default 0).
	Warmup int
	// Drain is the number of unmeasured sources after the measured ones
	// (default 1500; a negative value means none).
	Drain int
}

func (c RunConfig) withDefaults() RunConfig {
	if c.Packets == 0 {
		c.Packets = DefaultPackets
	}
	switch {
	case c.RTTPackets == 0:
		c.RTTPackets = DefaultRTTPackets
	case c.RTTPackets < 0:
		c.RTTPackets = 0
	}
	if c.MinPayload == 0 {
		c.MinPayload = DefaultMinPayload
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = DefaultMaxPayload
	}
	switch {
	case c.Drain == 0:
		c.Drain = DefaultDrain
	case c.Drain < 0:
		c.Drain = 0
	}
	return c
}

func (c RunConfig) validate() error {
	switch {
	case c.Packets < 1:
		return fmt.Errorf("fecsim: %d packets, want at least 1", c.Packets)
	case c.Warmup < 0:
		return fmt.Errorf("fecsim: warm-up of %d packets is negative", c.Warmup)
	case int64(c.Warmup)+int64(c.Packets)+int64(c.Drain) > 1<<31:
		return fmt.Errorf("fecsim: %d+%d+%d packets in one run, above 2^31", c.Warmup, c.Packets, c.Drain)
	case c.MinPayload < 0 || c.MaxPayload < c.MinPayload || c.MaxPayload > fec.MaxSymbolSize:
		return fmt.Errorf("fecsim: payload sizes %d..%d, want 0 <= min <= max <= %d", c.MinPayload, c.MaxPayload, fec.MaxSymbolSize)
	}
	return nil
}

// Run simulates one scheme over one loss model.
func Run(cfg RunConfig) (Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	model, err := loss.Parse(cfg.Loss, cfg.Seed)
	if err != nil {
		return Result{}, fmt.Errorf("fecsim: %w", err)
	}
	p, err := cfg.Scheme.build(model.Mean(), cfg.MaxPayload)
	if err != nil {
		return Result{}, fmt.Errorf("fecsim: scheme %s: %w", cfg.Scheme.Name, err)
	}
	s, err := newSimulation(cfg, model, p)
	if err != nil {
		return Result{}, err
	}
	if err := s.run(); err != nil {
		return Result{}, err
	}
	return s.result(), nil
}

// packet is one packet on the wire.
type packet struct {
	source bool
	esi    uint32 // sources only
	data   []byte
}

// pendingReport is a feedback report travelling back to the sender.
type pendingReport struct {
	due int64
	fb  fec.Feedback
}

// lostSource is what the simulation remembers of a source the channel
// dropped, to check and time its recovery.
type lostSource struct {
	data      []byte
	sentAt    int64
	recovered bool
}

// simulation is the state of one run.
type simulation struct {
	cfg     RunConfig
	model   loss.Model
	scheme  pair
	monitor *fec.LossMonitor
	sizes   *rand.Rand
	bytes   *rand.ChaCha8

	now     int64 // packets sent so far
	reports []pendingReport
	lost    map[uint32]*lostSource

	stats   counters
	delays  []int64
	decodeT time.Duration
}

// counters are the raw counts a Result is computed from.
type counters struct {
	sources, repairs, dropped        int64
	measuredLost, measuredRecovered  int64
	decoderPackets, decodeOutliers   int64
	mismatches, decodeErrors, report int64
}

func newSimulation(cfg RunConfig, model loss.Model, p pair) (*simulation, error) {
	s := &simulation{
		cfg:    cfg,
		model:  model,
		scheme: p,
		// Payload streams independent of the loss model's.
		sizes: rand.New(rand.NewPCG(cfg.Seed, 0x6665_6373_696d_7061)),
		bytes: rand.NewChaCha8(chachaSeed(cfg.Seed)),
		lost:  make(map[uint32]*lostSource),
	}
	if p.policy.Wants() {
		m, err := fec.NewLossMonitor(fec.MonitorConfig{FeedbackPolicy: p.policy})
		if err != nil {
			return nil, fmt.Errorf("fecsim: %w", err)
		}
		s.monitor = m
	}
	return s, nil
}

// run sends every source with the repairs the encoder adds, and the
// repairs that feedback triggers, through the channel. Reports are handed
// to the encoder between sources, so one may wait behind the repairs of
// the source before it: a few packets at most. Each batch of repairs is
// sent before the encoder is called again, as it may reuse their buffers.
func (s *simulation) run() error {
	total := s.cfg.Warmup + s.cfg.Packets + s.cfg.Drain
	for i := range total {
		s.deliverReports()
		payload := s.payload()
		repairs := s.scheme.enc.AddSource(payload)
		if err := s.scheme.check(); err != nil {
			return fmt.Errorf("fecsim: encoder: %w", err)
		}
		s.send(packet{source: true, esi: uint32(i), data: payload})
		s.sendRepairs(repairs)
	}
	return nil
}

// payload draws the next source payload: a random length, random bytes.
func (s *simulation) payload() []byte {
	n := s.cfg.MinPayload + s.sizes.IntN(s.cfg.MaxPayload-s.cfg.MinPayload+1)
	b := make([]byte, n)
	_, _ = s.bytes.Read(b) // ChaCha8.Read never fails
	return b
}

func (s *simulation) sendRepairs(repairs [][]byte) {
	for _, r := range repairs {
		s.send(packet{data: r})
	}
}

// deliverReports hands the encoder every report whose delay has elapsed
// and sends the repairs it answers with.
func (s *simulation) deliverReports() {
	for len(s.reports) > 0 && s.reports[0].due <= s.now {
		fb := s.reports[0].fb
		s.reports = s.reports[1:]
		s.sendRepairs(s.scheme.enc.OnFeedback(fb))
	}
}

// chachaSeed spreads a 64-bit seed over ChaCha8's 32-byte key.
func chachaSeed(seed uint64) [32]byte {
	var k [32]byte
	pcg := rand.NewPCG(seed, 0x7061_796c_6f61_6473)
	for i := 0; i < len(k); i += 8 {
		binary.LittleEndian.PutUint64(k[i:], pcg.Uint64())
	}
	return k
}

// send puts one packet on the lossy channel and, if it survives, through
// the receiver.
func (s *simulation) send(pk packet) {
	sentAt := s.now
	s.now++
	if pk.source {
		s.stats.sources++
	} else {
		s.stats.repairs++
	}
	if s.model.Drop() {
		s.stats.dropped++
		if pk.source {
			s.lost[pk.esi] = &lostSource{data: pk.data, sentAt: sentAt}
			if s.measured(pk.esi) {
				s.stats.measuredLost++
			}
		}
		return
	}
	s.receive(pk, sentAt)
}

// measured reports whether a source counts in the results.
func (s *simulation) measured(esi uint32) bool {
	return int(esi) >= s.cfg.Warmup && int(esi)-s.cfg.Warmup < s.cfg.Packets
}

// receive runs the decoder (timed) and the loss monitor on one packet.
func (s *simulation) receive(pk packet, at int64) {
	s.stats.decoderPackets++
	var recovered []fec.Recovered
	var err error
	start := time.Now()
	if pk.source {
		recovered = s.scheme.dec.AddSource(pk.esi, pk.data)
	} else {
		recovered, err = s.scheme.dec.AddRepair(pk.data)
	}
	s.addDecodeTime(time.Since(start))
	if err != nil {
		s.stats.decodeErrors++
	}
	if pk.source && s.monitor != nil {
		s.monitor.OnSource(pk.esi)
	}
	for _, r := range recovered {
		s.checkRecovered(r, at)
	}
	if s.monitor != nil {
		if fb, ok := s.monitor.Report(); ok {
			s.stats.report++
			s.reports = append(s.reports, pendingReport{due: at + 1 + int64(s.cfg.RTTPackets), fb: fb})
		}
	}
}

// decodeOutlier is a decoder call too long to be the decoder's own work:
// on a machine shared with other processes the thread was descheduled
// during the call. Such calls are left out of the decode time.
const decodeOutlier = time.Millisecond

// addDecodeTime accounts one decoder call's duration.
func (s *simulation) addDecodeTime(d time.Duration) {
	if d > decodeOutlier {
		s.stats.decodeOutliers++
		return
	}
	s.decodeT += d
}

// checkRecovered verifies a recovered source against the original and
// times its recovery.
func (s *simulation) checkRecovered(r fec.Recovered, at int64) {
	if s.monitor != nil {
		s.monitor.OnRecovered(r.ESI)
	}
	ls, ok := s.lost[r.ESI]
	if !ok || ls.recovered || !bytes.Equal(ls.data, r.Data) {
		// Wrong bytes, a source that was never lost, or one recovered
		// twice: the decoder returned something it should not have.
		s.stats.mismatches++
		return
	}
	ls.recovered = true
	ls.data = nil
	if s.measured(r.ESI) {
		s.stats.measuredRecovered++
		s.delays = append(s.delays, at-ls.sentAt)
	}
}
