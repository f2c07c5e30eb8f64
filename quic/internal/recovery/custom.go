package recovery

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/congestion"
)

// customController wraps an application's congestion.Controller
// (Config.Custom) as a Controller. It converts the Sender's events into
// the public ones, in buffers it reuses so that an ACK allocates nothing,
// and it keeps the Sender's guarantees whatever the controller answers
// (the congestion package's doc promises them):
//
//   - the window is floored at the minimum window (RFC 9002 section 7.2)
//     and capped at MaxWindow, so that a window of zero cannot stall the
//     connection;
//   - a pacing rate of zero is the window's rate, N x cwnd / smoothed_rtt
//     (RFC 9002 section 7.7), and no rate is below the minimum window per
//     smoothed RTT, so that the pacer never holds a packet for longer than
//     a round trip;
//   - a panic is recovered: the controller is not called again, the
//     window stays at the minimum, and ControllerError reports it so that
//     the connection closes.
type customController struct {
	user congestion.Controller
	// name is the controller's name, kept for State once it failed.
	name string
	mds  int
	// minPkts, maxWindow and pacingFactor are the Config's
	// MinWindowPackets, MaxWindow and Pacing.Factor.
	minPkts      int
	maxWindow    int
	pacingFactor float64
	// failed is the panic the controller raised, nil while it behaves.
	failed error

	acked []congestion.AckedPacket
	ev    congestion.AckEvent
	cev   congestion.CongestionEvent
}

// customName is a custom controller's name when it gives none.
const customName = "custom"

// customPhaseFailed is the phase State reports once the controller
// panicked.
const customPhaseFailed = "failed"

// newCustomController calls cfg.Custom and wraps what it makes.
func newCustomController(cfg *Config) (cc *customController, err error) {
	defer func() {
		if r := recover(); r != nil {
			cc, err = nil, fmt.Errorf("%w: Custom.New: %w: %v", ErrInvalidConfig, ErrControllerPanic, r)
		}
	}()
	user := cfg.Custom.New()
	if user == nil {
		return nil, fmt.Errorf("%w: Custom.New made a nil controller", ErrInvalidConfig)
	}
	c := &customController{
		user:         user,
		name:         customName,
		mds:          cfg.MaxDatagramSize,
		minPkts:      cfg.MinWindowPackets,
		maxWindow:    cfg.MaxWindow,
		pacingFactor: cfg.Pacing.Factor,
	}
	if st := user.State(); st.Name != "" {
		c.name = st.Name
	}
	return c, nil
}

// guard, deferred by every method that calls the controller, turns its
// panic into the failure ControllerError reports.
func (c *customController) guard(method string) {
	if r := recover(); r != nil {
		c.failed = fmt.Errorf("%w in %s: %v", ErrControllerPanic, method, r)
	}
}

func (c *customController) minWindow() int { return c.minPkts * c.mds }

// clampWindow bounds a window the controller gave.
func (c *customController) clampWindow(w int) int {
	return min(max(w, c.minWindow()), c.maxWindow)
}

func (c *customController) OnPacketSent(now time.Duration, bytes int, priorInFlight int64) {
	if c.failed != nil {
		return
	}
	defer c.guard("OnPacketSent")
	c.user.OnPacketSent(now, bytes, priorInFlight)
}

func (c *customController) OnAck(now time.Duration, ev *AckEvent) {
	if c.failed != nil {
		return
	}
	defer c.guard("OnAck")
	c.acked = c.acked[:0]
	for i := range ev.Acked {
		p := &ev.Acked[i]
		if p.InFlight {
			c.acked = append(c.acked, congestion.AckedPacket{Number: p.Number, Bytes: p.Bytes, TimeSent: p.TimeSent, AppLimited: p.AppLimited})
		}
	}
	c.ev = congestion.AckEvent{
		Acked:         c.acked,
		AckedBytes:    ev.AckedBytes,
		PriorInFlight: ev.PriorInFlight,
		BytesInFlight: ev.BytesInFlight,
		RTT:           rttSnapshot(ev.RTT),
		RTTUpdated:    ev.HasRTTSample,
		Delivered:     ev.Delivered,
		Rate:          publicRateSample(&ev.Rate),
	}
	c.user.OnAck(now, &c.ev)
}

func (c *customController) OnCongestionEvent(now time.Duration, ev *CongestionEvent) {
	if c.failed != nil {
		return
	}
	defer c.guard("OnCongestionEvent")
	c.cev = congestion.CongestionEvent{
		Cause:           publicCause(ev.Cause),
		LostBytes:       ev.LostBytes,
		LargestSentTime: ev.LargestSentTime,
		Persistent:      ev.Persistent,
		PriorInFlight:   ev.PriorInFlight,
		BytesInFlight:   ev.BytesInFlight,
		Handshake:       ev.Handshake,
		CEPackets:       ev.CEPackets,
	}
	c.user.OnCongestionEvent(now, &c.cev)
}

func (c *customController) Window() int {
	return c.clampWindow(c.userWindow())
}

// userWindow is the controller's own window, the minimum once it failed.
func (c *customController) userWindow() (w int) {
	if c.failed != nil {
		return 0
	}
	defer c.guard("Window")
	return c.user.Window()
}

// PacingRate is the controller's rate, or the window's when it gives
// zero, and never below the minimum window per smoothed RTT.
func (c *customController) PacingRate(rtt *RTTStats) uint64 {
	srtt := rtt.SmoothedRTT()
	floor := windowRate(c.minWindow(), srtt, 1)
	rate := c.userPacingRate(rtt)
	if rate == 0 {
		rate = windowRate(c.Window(), srtt, c.pacingFactor)
	}
	return max(rate, floor)
}

func (c *customController) userPacingRate(rtt *RTTStats) (rate uint64) {
	if c.failed != nil {
		return 0
	}
	defer c.guard("PacingRate")
	return c.user.PacingRate(rttSnapshot(rtt))
}

func (c *customController) InSlowStart() (slow bool) {
	if c.failed != nil {
		return false
	}
	defer c.guard("InSlowStart")
	return c.user.InSlowStart()
}

func (c *customController) SetMaxDatagramSize(n int) {
	if n <= 0 {
		return
	}
	c.mds = n
	if c.failed != nil {
		return
	}
	defer c.guard("SetMaxDatagramSize")
	c.user.SetMaxDatagramSize(n)
}

// State is the controller's State as the Sender reports it: its window
// as the Sender uses it (clamped), no slow start threshold when it gives
// none, and the phase "failed" once it panicked.
func (c *customController) State() ControllerState {
	st := c.userState()
	if st.Name == "" {
		st.Name = c.name
	}
	ssthresh := st.SSThresh
	if ssthresh <= 0 {
		ssthresh = InfiniteSSThresh
	}
	return ControllerState{
		Algorithm:     Custom,
		Phase:         phaseNamed(st.Phase),
		Window:        c.Window(),
		SSThresh:      ssthresh,
		RecoveryStart: st.RecoveryStart,
		Reductions:    st.Reductions,
		CustomName:    st.Name,
		CustomPhase:   st.Phase,
	}
}

func (c *customController) userState() (st congestion.State) {
	if c.failed != nil {
		return congestion.State{Phase: customPhaseFailed}
	}
	defer c.guard("State")
	st = c.user.State()
	if c.failed != nil {
		return congestion.State{Phase: customPhaseFailed}
	}
	return st
}

// phaseNamed is the built-in Phase a custom controller's phase names, or
// PhaseOther.
func phaseNamed(name string) Phase {
	for p := PhaseSlowStart; p < PhaseOther; p++ {
		if p.String() == name {
			return p
		}
	}
	return PhaseOther
}

// ControllerError is the panic of a custom controller (Config.Custom),
// wrapping ErrControllerPanic; nil while it behaves, and always for the
// built-in controllers. The connection closes when it is set: a
// controller in an unknown state cannot be trusted with the network.
func (s *Sender) ControllerError() error {
	if s.custom == nil {
		return nil
	}
	return s.custom.failed
}

func rttSnapshot(r *RTTStats) congestion.RTT {
	return congestion.RTT{
		Latest:    r.LatestRTT(),
		Min:       r.MinRTT(),
		Smoothed:  r.SmoothedRTT(),
		Var:       r.RTTVar(),
		HasSample: r.HasSample(),
	}
}

func publicRateSample(rs *RateSample) congestion.RateSample {
	return congestion.RateSample{
		HasData:        rs.HasData,
		Valid:          rs.Valid,
		DeliveryRate:   rs.DeliveryRate,
		Delivered:      rs.Delivered,
		Interval:       rs.Interval,
		SendElapsed:    rs.SendElapsed,
		AckElapsed:     rs.AckElapsed,
		PriorDelivered: rs.PriorDelivered,
		PriorTime:      rs.PriorTime,
		AppLimited:     rs.IsAppLimited,
		RTT:            rs.RTT,
		NewlyAcked:     rs.NewlyAcked,
		NewlyLost:      rs.NewlyLost,
		TxInFlight:     rs.TxInFlight,
		Lost:           rs.Lost,
	}
}

func publicCause(c CongestionCause) congestion.Cause {
	switch c {
	case CauseECN:
		return congestion.CauseECN
	case CauseFECRecovered:
		return congestion.CauseFECRecovered
	}
	return congestion.CauseLoss
}
