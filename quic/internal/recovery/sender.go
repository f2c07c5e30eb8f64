package recovery

import (
	"fmt"
	"time"
)

// maxPNGap is the largest jump between consecutive packet numbers of a
// space. Skipping numbers detects optimistic ACKs (RFC 9000 section 21.4);
// a skip needs one or a few numbers, and each skipped number costs a record.
const maxPNGap = 1024

// maxSkippedRanges bounds the remembered skipped ranges per space; older
// ones are forgotten.
const maxSkippedRanges = 64

// pnRange is a closed range of packet numbers.
type pnRange struct{ lo, hi uint64 }

// spaceState is the loss detection state of one packet number space
// (RFC 9002 appendix A.3).
type spaceState struct {
	ring sentRing
	// holes are the numbers, ascending, of packets at or below the
	// largest acknowledged that are still outstanding or were declared
	// lost and are watched for a late acknowledgement. Everything else
	// at or below largestAcked is resolved, so an ACK costs the new
	// packets it covers plus the holes, not the whole history.
	holes   []uint64
	skipped []pnRange

	hasSent bool
	nextPN  uint64 // last sent + 1

	hasLargestAcked bool
	largestAcked    uint64

	hasLossTime bool
	lossTime    time.Duration

	lastAckElicitingTime time.Duration
	ackElicitingInFlight int
	probes               int
	ecnCE                uint64
	discarded            bool
}

// Sender is the sending half of a connection's loss recovery and congestion
// control: RTT estimation, sent-packet tracking per space, loss detection,
// PTO, the congestion controller, delivery-rate sampling and pacing.
//
// Time is a time.Duration since an epoch the core chooses (usually the
// connection's start); every method that depends on time takes it, and the
// Sender never reads a clock. A Sender is not safe for concurrent use.
type Sender struct {
	cfg    Config
	rtt    RTTStats
	spaces [numSpaces]spaceState
	cc     Controller
	pacer  Pacer
	rate   rateSampler
	mds    int

	bytesInFlight int64
	ptoCount      int

	handshakeConfirmed bool
	hasHandshakeKeys   bool
	handshakeAcked     bool
	ampLimited         bool

	timer      time.Duration
	timerArmed bool

	res   Result
	ev    AckEvent
	cev   CongestionEvent
	stats Stats
	// delivered collects packets newly recovered by the peer, for the
	// controller when the FEC policy hides them.
	delivered []PacketInfo
	// auto is the path evidence of the FECAuto policy (fec_auto.go).
	auto fecAuto
	// observer learns which packets were acknowledged and lost
	// (pathprobe.go).
	observer PacketObserver
	// deferred are FEC sources declared lost whose congestion signal
	// waits for the peer's FEC report (fec_defer.go).
	deferred []deferredLoss
	// resume is Careful Resume wrapping the controller (cc is then
	// resume), nil until StartCarefulResume; path measures what
	// SavablePathState reports (resume*.go).
	resume *carefulResume
	path   pathRecord
	// custom is the wrapper of an application's controller (Config.Custom,
	// custom.go), which is also cc; nil for the built-in controllers.
	custom *customController
}

// New returns a Sender for cfg, or an error wrapping ErrInvalidConfig.
func New(cfg Config) (*Sender, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sender{
		cfg: cfg,
		rtt: newRTTStats(cfg.InitialRTT, cfg.MaxAckDelay),
		mds: cfg.MaxDatagramSize,
	}
	if cfg.Custom == nil {
		s.cc = newController(&cfg)
		return s, nil
	}
	custom, err := newCustomController(&cfg)
	if err != nil {
		return nil, err
	}
	s.cc, s.custom = custom, custom
	return s, nil
}

// OnPacketSent records a packet the core has just sent (RFC 9002 appendix
// A.5). Packets that are not in flight (ACK only) are recorded too, so that
// packet numbers stay contiguous and their acknowledgement is recognized.
func (s *Sender) OnPacketSent(now time.Duration, p SentPacket) error {
	sp, err := s.sendSpace(p)
	if err != nil {
		return err
	}
	s.recordSkipped(sp, p.Number)
	rec := sp.ring.push(p.Number)
	rec.timeSent = now
	rec.ref = p.Ref
	rec.bytes = int32(p.Bytes)
	rec.state = stateOutstanding
	sp.hasSent, sp.nextPN = true, p.Number+1
	s.stats.PacketsSent++
	s.stats.BytesSent += uint64(p.Bytes)
	if p.InFlight {
		if s.resume != nil {
			s.resume.noteSent(p.Space, p.Number)
		}
		s.sendInFlight(now, sp, rec, p.AckEliciting)
		if p.Repair && s.cfg.FECPolicy.hidesFECLosses() {
			rec.flags |= flagHiddenRepair
		}
		if p.Source && s.cfg.FECPolicy.hidesFECLosses() {
			rec.flags |= flagDeferSignal
		}
	}
	s.setTimer(now)
	return nil
}

// sendSpace validates a sent packet and returns its space.
func (s *Sender) sendSpace(p SentPacket) (*spaceState, error) {
	sp, err := s.space(p.Space)
	if err != nil {
		return nil, err
	}
	switch {
	case p.Bytes < 0 || p.Bytes > maxDatagramSizeLimit:
		return nil, fmt.Errorf("%w: size %d out of range", ErrInvalidPacket, p.Bytes)
	case p.InFlight && p.Bytes == 0:
		return nil, fmt.Errorf("%w: an in-flight packet has no bytes", ErrInvalidPacket)
	case p.AckEliciting && !p.InFlight:
		return nil, fmt.Errorf("%w: an ack-eliciting packet is always in flight (RFC 9002 section 2)", ErrInvalidPacket)
	case sp.hasSent && p.Number < sp.nextPN:
		return nil, fmt.Errorf("%w: packet number %d after %d in the %s space", ErrInvalidPacket, p.Number, sp.nextPN-1, p.Space)
	case sp.hasSent && p.Number-sp.nextPN > maxPNGap:
		return nil, fmt.Errorf("%w: packet number %d skips more than %d numbers", ErrInvalidPacket, p.Number, maxPNGap)
	case !sp.hasSent && p.Number > maxPNGap:
		return nil, fmt.Errorf("%w: first packet number %d skips more than %d numbers", ErrInvalidPacket, p.Number, maxPNGap)
	}
	return sp, nil
}

func (s *Sender) space(space Space) (*spaceState, error) {
	if !space.valid() {
		return nil, fmt.Errorf("%w: %d", ErrInvalidSpace, space)
	}
	sp := &s.spaces[space]
	if sp.discarded {
		return nil, fmt.Errorf("%w: %s", ErrSpaceDiscarded, space)
	}
	return sp, nil
}

// recordSkipped remembers the numbers between the last sent and pn, both
// as records (the ring stays contiguous) and as ranges (an ACK of one is a
// protocol violation).
func (s *Sender) recordSkipped(sp *spaceState, pn uint64) {
	lo := sp.nextPN
	if pn <= lo {
		return
	}
	if len(sp.skipped) == maxSkippedRanges {
		copy(sp.skipped, sp.skipped[1:])
		sp.skipped = sp.skipped[:maxSkippedRanges-1]
	}
	sp.skipped = append(sp.skipped, pnRange{lo, pn - 1})
	if sp.ring.len() == 0 {
		return
	}
	for q := lo; q < pn; q++ {
		sp.ring.push(q).state = stateSkipped
	}
}

func (s *Sender) sendInFlight(now time.Duration, sp *spaceState, rec *sentPacket, ackEliciting bool) {
	prior := s.bytesInFlight
	rec.flags |= flagInFlight
	s.rate.onSent(rec, now, prior)
	s.bytesInFlight += int64(rec.bytes)
	if ackEliciting {
		rec.flags |= flagAckEliciting
		sp.ackElicitingInFlight++
		sp.lastAckElicitingTime = now
		if sp.probes > 0 {
			sp.probes--
		}
	}
	s.cc.OnPacketSent(now, int(rec.bytes), prior)
	s.auto.onSent(now, s.rtt.SmoothedRTT())
	if !s.cfg.Pacing.Disabled {
		rate := s.cc.PacingRate(&s.rtt)
		s.pacer.OnSent(now, int(rec.bytes), rate, s.burstCapacity(rate))
	}
}

// CanSend reports whether a full-size in-flight packet fits in the
// congestion window (RFC 9002 section 7: bytes in flight must not exceed
// it), or a probe is pending (probes are never blocked, section 7.5).
func (s *Sender) CanSend() bool {
	return s.probesPending() > 0 || s.bytesInFlight+int64(s.mds) <= int64(s.cc.Window())
}

// SendWindow is the number of bytes the congestion window still allows,
// for a core that sizes a smaller packet to fit.
func (s *Sender) SendWindow() int {
	return int(max(int64(s.cc.Window())-s.bytesInFlight, 0))
}

// NextSendTime is when the next in-flight packet of size bytes may leave
// under pacing: now or later. Probes are not paced. Packets that carry only
// ACK frames should not be paced either (RFC 9002 section 7.7).
func (s *Sender) NextSendTime(now time.Duration, size int) time.Duration {
	if s.cfg.Pacing.Disabled || s.probesPending() > 0 {
		return now
	}
	rate := s.cc.PacingRate(&s.rtt)
	return s.pacer.NextSendTime(now, size, rate, s.burstCapacity(rate))
}

// PacingRate is the current pacing rate in bytes per second.
func (s *Sender) PacingRate() uint64 { return s.cc.PacingRate(&s.rtt) }

func (s *Sender) burstCapacity(rate uint64) int64 {
	p := &s.cfg.Pacing
	return Capacity(rate, p.BurstPackets, s.mds, p.BurstTime, max(s.cc.Window(), p.BurstPackets*s.mds))
}

func (s *Sender) probesPending() int {
	n := 0
	for i := range s.spaces {
		n += s.spaces[i].probes
	}
	return n
}

// ProbesPending is the number of probe packets still owed in space.
func (s *Sender) ProbesPending(space Space) int {
	if !space.valid() {
		return 0
	}
	return s.spaces[space].probes
}

// SetAppLimited tells the Sender the core had nothing to send while the
// window and the pacer allowed it (RFC 9002 section 7.8). Packets sent
// until the data in flight now is delivered do not grow the window, and
// rate samples taken meanwhile are marked application limited.
func (s *Sender) SetAppLimited() { s.rate.markAppLimited(s.bytesInFlight) }

// SetMaxDatagramSize follows a path MTU change (RFC 9000 section 14).
func (s *Sender) SetMaxDatagramSize(n int) error {
	if n < 1200 || n > maxDatagramSizeLimit {
		return fmt.Errorf("%w: MaxDatagramSize %d out of [1200, %d]", ErrInvalidConfig, n, maxDatagramSizeLimit)
	}
	s.mds = n
	s.cc.SetMaxDatagramSize(n)
	return nil
}

// BytesInFlight is the sum of the sizes of in-flight packets not yet
// acknowledged, declared lost, recovered or discarded.
func (s *Sender) BytesInFlight() int64 { return s.bytesInFlight }

// CongestionWindow is the controller's window in bytes.
func (s *Sender) CongestionWindow() int { return s.cc.Window() }

// InSlowStart reports the controller's slow start.
func (s *Sender) InSlowStart() bool { return s.cc.InSlowStart() }

// RTT returns the estimator. It is read-only for the caller.
func (s *Sender) RTT() *RTTStats { return &s.rtt }

// ControllerState describes the congestion controller.
func (s *Sender) ControllerState() ControllerState { return s.cc.State() }

// Stats returns the counters.
func (s *Sender) Stats() Stats { return s.stats }

// PTOCount is the number of consecutive PTOs without an acknowledgement.
func (s *Sender) PTOCount() int { return s.ptoCount }

// signal hands a congestion event to the controller through a field, so
// that the interface call does not allocate.
func (s *Sender) signal(now time.Duration, ev CongestionEvent) {
	s.stats.CongestionSignals++
	s.cev = ev
	s.cc.OnCongestionEvent(now, &s.cev)
}
