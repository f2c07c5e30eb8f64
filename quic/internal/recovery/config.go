package recovery

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/congestion"
)

// Algorithm names a congestion controller.
type Algorithm uint8

const (
	// CUBIC is RFC 9438 with HyStart++ (RFC 9406) slow start. It is the
	// default: its window growth does not depend on the RTT, which a
	// 600 ms path needs.
	CUBIC Algorithm = iota
	// NewReno is the controller of RFC 9002 section 7 and appendix B.
	NewReno
	// BBR is BBRv3 (draft-ietf-ccwg-bbr): a model of the path's
	// bottleneck bandwidth and round-trip time sets the pacing rate and
	// the window, so random loss below BBRConfig.LossThresh does not
	// reduce the rate.
	BBR
	// Custom is a controller of the application's own (Config.Custom,
	// custom.go).
	Custom
)

func (a Algorithm) String() string {
	switch a {
	case CUBIC:
		return "cubic"
	case NewReno:
		return "newreno"
	case BBR:
		return "bbr"
	case Custom:
		return "custom"
	}
	return "invalid"
}

// FECPolicy says whether a packet that the peer recovered with FEC, and so
// never received, counts as a congestion signal.
type FECPolicy uint8

const (
	// FECSignal treats a recovered packet as lost for congestion control,
	// as RFC 9265 recommends for unknown paths. Its data is still
	// delivered: it is never retransmitted.
	FECSignal FECPolicy = iota
	// FECHide treats a recovered packet as delivered, for paths known to
	// lose packets without congestion (Starlink, satellite profiles).
	FECHide
	// FECAuto treats a recovered packet as lost where the path shows
	// congestion around it (queueing delay, ECN-CE, losses beyond what
	// FEC repairs) and as delivered otherwise (fec_auto.go).
	FECAuto
)

func (p FECPolicy) String() string {
	switch p {
	case FECSignal:
		return "signal"
	case FECHide:
		return "hide"
	case FECAuto:
		return "auto"
	}
	return "invalid"
}

// Config holds every tunable of loss recovery, congestion control and
// pacing. Durations are times; windows are bytes. WithDefaults replaces
// each zero field with its default, the RFC value (DefaultConfig is the
// zero Config so filled in); New takes the Config as it is and rejects a
// field out of range instead of guessing. A field whose zero is a value of
// its own (MaxAckDelay, MinPTO, InitialWindowLimit, FECMaxHold, BurstTime,
// LongRTT.MinRTT, FECAuto's QueueDelayFraction, MinQueueDelay and
// UnrepairedRate) takes that value only in a Config given to New without
// WithDefaults.
type Config struct {
	// IsServer selects the endpoint's role. A server never arms the
	// client's anti-deadlock PTO (RFC 9002 section 6.2.2.1) and considers
	// its peer's address validated (appendix A.6).
	IsServer bool

	// InitialRTT is the RTT assumed before the first sample: 333 ms (RFC
	// 9002 section 6.2.2). A resumed connection may use the smoothed RTT
	// it measured before.
	InitialRTT time.Duration
	// MaxAckDelay is the peer's max_ack_delay until its transport
	// parameters arrive (SetPeerMaxAckDelay): 25 ms, the default of RFC
	// 9000 section 18.2.
	MaxAckDelay time.Duration
	// Granularity is the system timer granularity, kGranularity: 1 ms
	// (RFC 9002 section 6.1.2).
	Granularity time.Duration
	// PacketThreshold is kPacketThreshold: 3 (RFC 9002 section 6.1.1,
	// which says it SHOULD NOT be lower).
	PacketThreshold uint64
	// TimeThresholdNum/TimeThresholdDen is kTimeThreshold: 9/8 (RFC 9002
	// section 6.1.2).
	TimeThresholdNum, TimeThresholdDen int64
	// PersistentCongestionThreshold is kPersistentCongestionThreshold: 3
	// (RFC 9002 section 7.6.1).
	PersistentCongestionThreshold int
	// MinPTO is a floor on the PTO period before backoff. The RFC formula
	// already never goes below Granularity; a path with a known RTT floor
	// may raise it.
	MinPTO time.Duration
	// MaxPTO caps the backed-off PTO period. RFC 9002 sets no cap (the
	// idle timeout ends a dead connection); the cap keeps repeated
	// doubling from overflowing and bounds the wait after an outage.
	MaxPTO time.Duration
	// PTOProbes is how many ack-eliciting probes a PTO asks for: RFC 9002
	// section 6.2.4 allows one or two.
	PTOProbes int

	// MaxDatagramSize is the sender's max_datagram_size: 1200 bytes until
	// path MTU discovery raises it (SetMaxDatagramSize).
	MaxDatagramSize int
	// InitialWindowPackets and InitialWindowLimit set the initial window
	// min(InitialWindowPackets * MaxDatagramSize, max(InitialWindowLimit,
	// 2 * MaxDatagramSize)): 10 packets and 14720 bytes (RFC 9002 section
	// 7.2).
	InitialWindowPackets int
	InitialWindowLimit   int
	// MinWindowPackets is kMinimumWindow in packets: 2 (RFC 9002 section
	// 7.2).
	MinWindowPackets int
	// MaxWindow caps the congestion window in bytes. The default, 160
	// MiB (167.8 MB), is twice the bandwidth-delay product of the fastest
	// GEO path satquic aims at, 1 Gbit/s x 650 ms (81.25 MB): the path
	// plus a bottleneck buffer of the same size. A cap costs nothing
	// until the window grows: the records of packets in flight are rings
	// that double as they fill (ring.go).
	MaxWindow int

	// Algorithm selects the congestion controller.
	Algorithm Algorithm
	// Custom, if set, makes each Sender's controller: an application's
	// own, which the Sender wraps so that it keeps its guarantees whatever
	// the controller answers (custom.go). Algorithm is then ignored, and
	// Careful Resume does not apply.
	Custom *CustomController
	// CUBIC tunes the CUBIC controller.
	CUBIC CUBICConfig
	// BBR tunes the BBR controller.
	BBR BBRConfig
	// HyStart tunes HyStart++ slow start (CUBIC and NewReno). Its RTT
	// thresholds also end the long-RTT slow start.
	HyStart HyStartConfig
	// LongRTT speeds up the first slow start on long round trips (CUBIC
	// and NewReno), and BBR's first Startup: its scaled initial window and
	// its first-flight jump (bbr_longrtt.go).
	LongRTT LongRTTConfig
	// Pacing tunes the pacer.
	Pacing PacingConfig
	// CarefulResume tunes Careful Resume (RFC 9959), which a server
	// starts with Sender.StartCarefulResume.
	CarefulResume CarefulResumeConfig

	// FECPolicy says how a packet recovered by the peer's FEC decoder
	// counts for congestion control.
	FECPolicy FECPolicy
	// FECMaxHold bounds how long a repair deadline (CoverPacket) may delay
	// a packet's loss declaration beyond the time the RFC 9002 time
	// threshold would declare it: a safety net against a repair that
	// never comes. A path whose smoothed RTT is longer holds for that
	// instead: a repair's report takes a round trip to come back, and on
	// a GEO path (600 ms) losses declared a few hundred milliseconds
	// before it cut the window for losses the peer then rebuilt.
	FECMaxHold time.Duration
	// FECAuto tunes the congestion test of the FECAuto policy.
	FECAuto FECAutoConfig
}

// CustomController makes an application's congestion controllers. Config
// holds a pointer to it, not the function, so that a Config stays
// comparable.
type CustomController struct {
	// New is called once per Sender, by New, and must return a new
	// controller each time.
	New func() congestion.Controller
}

// CUBICConfig tunes CUBIC (RFC 9438).
type CUBICConfig struct {
	// NoFastConvergence turns off fast convergence, which releases
	// bandwidth faster when a new flow joins (RFC 9438 section 4.7).
	NoFastConvergence bool
}

// HyStartConfig tunes HyStart++ (RFC 9406 section 4.3). The defaults are
// the RFC's constants.
type HyStartConfig struct {
	// Disabled turns HyStart++ off; it is on for the first slow start by
	// default.
	Disabled bool
	// MinRTTThresh and MaxRTTThresh bound the RTT increase that ends slow
	// start: 4 ms and 16 ms.
	MinRTTThresh, MaxRTTThresh time.Duration
	// MinRTTDivisor sets the threshold to lastRoundMinRTT/MinRTTDivisor
	// within those bounds: 8.
	MinRTTDivisor int
	// NRTTSample is the number of RTT samples a round needs: 8.
	NRTTSample int
	// CSSGrowthDivisor slows window growth in Conservative Slow Start: 4.
	CSSGrowthDivisor int
	// CSSRounds is the number of CSS rounds before congestion avoidance:
	// 5.
	CSSRounds int
}

// LongRTTConfig tunes slow start on paths whose minimum RTT is at least
// MinRTT. Slow start doubles the window once per round trip, so the time
// it needs to fill a path grows with the RTT: from the 10-packet initial
// window, a 250 Mbit/s x 600 ms GEO path (15,600 packets of 1200 bytes)
// takes ten round trips, 6 s.
//
// On such a path the first slow start grows the window by f =
// min(minRTT/ReferenceRTT, MaxFactor) bytes per byte acknowledged instead
// of one (sevenfold per round trip on a 600 ms path), paces each round
// trip's window as a train at (1+f) x cwnd/srtt so that the bottleneck's
// queue shows a round trip before the window reaches it, ends on the first
// sustained RTT increase instead of a round later (HyStart++'s rounds),
// and continues from the bottleneck rate it measured then; unless
// NoScaleInitialWindow, the first RTT sample also raises the window to f
// initial windows, and unless NoJump the ACKs of the first burst measure
// the bottleneck's rate so that the window reaches its bandwidth-delay product
// a round trip after the data began. The longRTT type in longrtt.go gives
// the reasons.
// After a loss the window is known and slow start is RFC 9002's, as
// HyStart++ also applies only to the first slow start (RFC 9406 section
// 4.3). Off, or on a shorter path, slow start is RFC 9002's with
// HyStart++.
type LongRTTConfig struct {
	// Disabled turns the acceleration off (it is on by default:
	// satquic's paths are satellite paths).
	Disabled bool
	// MinRTT is the shortest minimum RTT accelerated: 80 ms, the round
	// trip of in-flight and GEO paths and of the longest terrestrial ones
	// (Starlink's 20-60 ms is left to RFC 9002's slow start).
	MinRTT time.Duration
	// ReferenceRTT is the RTT whose slow start the acceleration imitates
	// in rate: 50 ms, so that a 100 ms path grows threefold per round trip
	// and exits on the measured bottleneck rate instead of overshooting a
	// one-BDP buffer (seed-ifc: 10 MB in 2.09 s instead of 2.6 s).
	ReferenceRTT time.Duration
	// MaxFactor caps minRTT/ReferenceRTT: 6, a GEO path's 600 ms, so that
	// a path with a pathological RTT (a standing queue of seconds) is not
	// flooded.
	MaxFactor float64
	// NoScaleInitialWindow keeps the initial window at the first RTT
	// sample, which by default raises it to f initial windows: ten
	// packets per ReferenceRTT, paced, instead of ten per round trip. RFC
	// 9002 section 7.2 recommends ten packets whatever the RTT; this is a deliberate departure for paths
	// known to be long, which Careful Resume (RFC 9959) takes much further
	// with a remembered window.
	NoScaleInitialWindow bool
	// NoJump turns off the jump, which (with the scaled initial window
	// and pacing) sends the scaled initial window as one burst, measures
	// the bottleneck's rate from the spacing of its ACKs, and sets the
	// window to that rate's bandwidth-delay product when the burst's ACKs
	// are in: one round trip after the data began, where the growth above needs three or
	// four. A path whose ACKs show jitter keeps that growth. The
	// firstFlight type in firstflight.go gives the method and its guards.
	NoJump bool
}

// CarefulResumeConfig tunes Careful Resume (RFC 9959, resume*.go).
type CarefulResumeConfig struct {
	// Disable turns Careful Resume off: StartCarefulResume is ignored
	// and every connection starts from the initial window.
	Disable bool
	// MaxJump is max_jump, the largest window in bytes the Unvalidated
	// Phase may jump to: jump_cwnd = min(MaxJump, saved_cwnd/2) (RFC 9959
	// section 3.3). RFC 9959 leaves its value to the sender as a safety
	// margin and names no number, so zero, the default, means MaxWindow:
	// the jump is bounded by half the saved window and the window's cap
	// only.
	MaxJump int
}

// PacingConfig tunes the pacer (RFC 9002 section 7.7).
type PacingConfig struct {
	// Disabled turns pacing off. Without pacing, RFC 9002 section 7.7
	// requires another way to limit bursts to the initial window.
	Disabled bool
	// Factor is N in rate = N * cwnd / smoothed_rtt: 1.25.
	Factor float64
	// BurstPackets is the smallest bucket, in packets of MaxDatagramSize:
	// 10, the initial window, which RFC 9002 section 7.7 allows as a burst.
	BurstPackets int
	// BurstTime grows the bucket at high rates to rate * BurstTime: 2 ms
	// (about 65 packets of 1200 bytes at 250 Mbit/s and the pacing factor,
	// 2600 at 10 Gbit/s; below 59 Mbit/s BurstPackets is larger).
	//
	// It is the timer lateness the pacer absorbs. A sender waits for its
	// next packet on a timer, and timers wake late: Go's on Linux wait in
	// epoll with millisecond resolution (a shorter wait becomes 1 ms), and
	// a loaded machine adds scheduling delay. Tokens keep accruing while
	// the sender oversleeps, and a bucket that holds rate * lateness lets
	// it send them when it wakes, so the long-run rate stays the pacing
	// rate; a smaller bucket overflows, and each late wake-up costs that
	// much rate (with 250 us at 250 Mbit/s, a sender waking once a
	// millisecond keeps 38% of its rate: TestPacerTimerLateness). The
	// bursts this allows are at most 2 ms of the rate the window already
	// sustains on the path, which RFC 9002 section 7.7 permits to a
	// sender that knows its path absorbs them; a path that cannot (a
	// shallow bottleneck queue far below the window) asks for a smaller
	// value.
	BurstTime time.Duration
}

// Default values, exported for tests and for the documentation of callers.
const (
	DefaultInitialRTT      = 333 * time.Millisecond
	DefaultMaxAckDelay     = 25 * time.Millisecond
	DefaultGranularity     = time.Millisecond
	DefaultMaxDatagramSize = 1200
	DefaultMaxWindow       = 160 << 20
	DefaultMaxPTO          = 60 * time.Second
	DefaultFECMaxHold      = 250 * time.Millisecond
	// DefaultPacingBurstTime is PacingConfig.BurstTime's default: twice
	// the timer granularity.
	DefaultPacingBurstTime = 2 * DefaultGranularity
	// DefaultLongRTTMin, DefaultLongRTTReference and
	// DefaultLongRTTMaxFactor are LongRTTConfig's defaults.
	DefaultLongRTTMin       = 80 * time.Millisecond
	DefaultLongRTTReference = 50 * time.Millisecond
	DefaultLongRTTMaxFactor = 6
)

// DefaultConfig returns the RFC 9002, RFC 9438 and RFC 9406 values, the
// client role, CUBIC with HyStart++, the long-RTT slow start, pacing on,
// and FEC policy signal (the zero value: the public API of package quic
// chooses auto): the zero Config with its defaults filled in.
func DefaultConfig() Config { return Config{}.WithDefaults() }

// WithDefaults returns c with every zero field set to its default (the
// Default constants, and the RFCs' values named in the field comments).
// Flags are off when zero: the defaults of CUBIC, HyStart++, the long-RTT
// slow start and pacing are on.
func (c Config) WithDefaults() Config {
	setDefault(&c.InitialRTT, DefaultInitialRTT)
	setDefault(&c.MaxAckDelay, DefaultMaxAckDelay)
	setDefault(&c.Granularity, DefaultGranularity)
	setDefault(&c.PacketThreshold, 3)
	if c.TimeThresholdNum == 0 && c.TimeThresholdDen == 0 {
		c.TimeThresholdNum, c.TimeThresholdDen = 9, 8
	}
	setDefault(&c.PersistentCongestionThreshold, 3)
	setDefault(&c.MinPTO, DefaultGranularity)
	setDefault(&c.MaxPTO, DefaultMaxPTO)
	setDefault(&c.PTOProbes, 2)
	setDefault(&c.MaxDatagramSize, DefaultMaxDatagramSize)
	setDefault(&c.InitialWindowPackets, 10)
	setDefault(&c.InitialWindowLimit, 14720)
	setDefault(&c.MinWindowPackets, 2)
	setDefault(&c.MaxWindow, DefaultMaxWindow)
	setDefault(&c.FECMaxHold, DefaultFECMaxHold)
	c.HyStart = c.HyStart.withDefaults()
	c.LongRTT = c.LongRTT.withDefaults()
	c.Pacing = c.Pacing.withDefaults()
	c.BBR = c.BBR.withDefaults()
	c.FECAuto = c.FECAuto.withDefaults()
	return c
}

// withDefaults fills in RFC 9406 section 4.3's constants.
func (h HyStartConfig) withDefaults() HyStartConfig {
	setDefault(&h.MinRTTThresh, 4*time.Millisecond)
	setDefault(&h.MaxRTTThresh, 16*time.Millisecond)
	setDefault(&h.MinRTTDivisor, 8)
	setDefault(&h.NRTTSample, 8)
	setDefault(&h.CSSGrowthDivisor, 4)
	setDefault(&h.CSSRounds, 5)
	return h
}

func (l LongRTTConfig) withDefaults() LongRTTConfig {
	setDefault(&l.MinRTT, DefaultLongRTTMin)
	setDefault(&l.ReferenceRTT, DefaultLongRTTReference)
	setDefault(&l.MaxFactor, DefaultLongRTTMaxFactor)
	return l
}

func (p PacingConfig) withDefaults() PacingConfig {
	setDefault(&p.Factor, 1.25)
	setDefault(&p.BurstPackets, 10)
	setDefault(&p.BurstTime, DefaultPacingBurstTime)
	return p
}

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// maxDatagramSizeLimit is the largest UDP payload (RFC 9000 section
// 18.2, max_udp_payload_size).
const maxDatagramSizeLimit = 65527

// Validate reports the first field out of range, wrapping ErrInvalidConfig.
func (c *Config) Validate() error {
	// Every new connection validates its configuration: the checks go
	// into an array on the stack rather than a slice on the heap.
	var room [64]check
	chks := c.checks(room[:0])
	if c.Algorithm == BBR && c.Custom == nil {
		chks = c.BBR.checks(chks)
	}
	for _, chk := range chks {
		if !chk.ok {
			return fmt.Errorf("%w: %s", ErrInvalidConfig, chk.msg)
		}
	}
	return nil
}

type check struct {
	ok  bool
	msg string
}

// checks appends Config's ranges to dst.
func (c *Config) checks(dst []check) []check {
	h, p := &c.HyStart, &c.Pacing
	return append(dst, []check{
		{c.InitialRTT > 0, "InitialRTT must be positive"},
		{c.MaxAckDelay >= 0, "MaxAckDelay must not be negative"},
		{c.Granularity > 0, "Granularity must be positive"},
		{c.PacketThreshold >= 1, "PacketThreshold must be at least 1"},
		{c.TimeThresholdDen > 0 && c.TimeThresholdNum >= c.TimeThresholdDen, "TimeThreshold must be at least 1 (Num >= Den > 0)"},
		{c.PersistentCongestionThreshold >= 1, "PersistentCongestionThreshold must be at least 1"},
		{c.MinPTO >= 0, "MinPTO must not be negative"},
		{c.MaxPTO > 0 && c.MaxPTO >= c.MinPTO, "MaxPTO must be positive and at least MinPTO"},
		{c.PTOProbes == 1 || c.PTOProbes == 2, "PTOProbes must be 1 or 2"},
		{c.MaxDatagramSize >= 1200 && c.MaxDatagramSize <= maxDatagramSizeLimit, "MaxDatagramSize must be in [1200, 65527]"},
		{c.InitialWindowPackets >= 1, "InitialWindowPackets must be at least 1"},
		{c.InitialWindowLimit >= 0, "InitialWindowLimit must not be negative"},
		{c.MinWindowPackets >= 1, "MinWindowPackets must be at least 1"},
		{c.MaxWindow >= c.MinWindowPackets*c.MaxDatagramSize, "MaxWindow, the congestion window's cap, must hold the minimum window"},
		{c.Custom == nil || c.Custom.New != nil, "Custom.New must be set"},
		{c.Algorithm != Custom || c.Custom != nil, "Algorithm Custom needs Custom"},
		{c.Custom != nil || c.Algorithm == CUBIC || c.Algorithm == NewReno || c.Algorithm == BBR, "Algorithm is unknown"},
		{h.Disabled || (h.MinRTTThresh > 0 && h.MaxRTTThresh >= h.MinRTTThresh), "HyStart RTT thresholds must be positive and ordered"},
		{h.Disabled || (h.MinRTTDivisor > 0 && h.NRTTSample > 0 && h.CSSGrowthDivisor > 0 && h.CSSRounds > 0), "HyStart divisors, sample count and rounds must be positive"},
		{c.LongRTT.Disabled || (c.LongRTT.ReferenceRTT > 0 && c.LongRTT.MinRTT >= 0), "LongRTT.ReferenceRTT must be positive and MinRTT not negative"},
		{c.LongRTT.Disabled || (c.LongRTT.MaxFactor >= 1 && c.LongRTT.MaxFactor <= 100), "LongRTT.MaxFactor must be in [1, 100]"},
		{c.LongRTT.Disabled || (h.MinRTTThresh > 0 && h.MaxRTTThresh >= h.MinRTTThresh && h.MinRTTDivisor > 0), "LongRTT ends on HyStart's RTT thresholds: they must be positive and ordered"},
		{p.Disabled || (p.Factor >= 1 && p.Factor <= 100), "Pacing.Factor must be in [1, 100]"},
		{p.Disabled || p.BurstPackets >= 1, "Pacing.BurstPackets must be at least 1"},
		{p.Disabled || p.BurstTime >= 0, "Pacing.BurstTime must not be negative"},
		{c.FECPolicy <= FECAuto, "FECPolicy is unknown"},
		{c.FECPolicy != FECAuto || c.FECAuto.valid(), "FECAuto needs QueueDelayFraction in [0, 10], MinQueueDelay not negative, UnrepairedLosses at least 1 and UnrepairedRate in [0, 1]"},
		{c.FECMaxHold >= 0, "FECMaxHold must not be negative"},
		{c.CarefulResume.MaxJump >= 0, "CarefulResume.MaxJump must not be negative"},
	}...)
}

// initialWindow is RFC 9002 section 7.2's initial congestion window.
func (c *Config) initialWindow(mds int) int {
	limit := max(c.InitialWindowLimit, 2*mds)
	return max(min(c.InitialWindowPackets*mds, limit, c.MaxWindow), c.minWindow(mds))
}

// minWindow is kMinimumWindow in bytes.
func (c *Config) minWindow(mds int) int { return c.MinWindowPackets * mds }
