package recovery

import (
	"math"
	"time"
)

// Controller is a congestion controller. The Sender owns bytes in flight,
// loss detection and the rate sampler, and tells the controller what
// happened; the controller owns the window and the pacing rate. NewReno,
// CUBIC and BBR implement it.
//
// A controller is a pure state machine: every method takes the current
// time, none reads a clock.
type Controller interface {
	// OnPacketSent is called for every in-flight packet, with the bytes in
	// flight before it was sent.
	OnPacketSent(now time.Duration, bytes int, priorInFlight int64)
	// OnAck is called once per ACK frame that newly acknowledges packets
	// (and once per report of packets the peer recovered when the FEC
	// policy counts them as delivered: Sender.RecoveredIsCongestion),
	// after any congestion event the same frame caused.
	OnAck(now time.Duration, ev *AckEvent)
	// OnCongestionEvent is called when in-flight packets are declared
	// lost, when the peer reports an increase of the ECN-CE counter, and
	// when the peer reports packets it recovered that the FEC policy
	// counts as congestion.
	OnCongestionEvent(now time.Duration, ev *CongestionEvent)
	// Window is the congestion window in bytes.
	Window() int
	// PacingRate is the rate in bytes per second at which the pacer
	// releases packets.
	PacingRate(rtt *RTTStats) uint64
	// InSlowStart reports whether the window grows exponentially.
	InSlowStart() bool
	// SetMaxDatagramSize follows a path MTU change.
	SetMaxDatagramSize(n int)
	// State describes the controller for qlog and statistics.
	State() ControllerState
}

// AckEvent is what one ACK frame taught the sender. Slices alias the
// Sender's buffers and are valid only during the call.
type AckEvent struct {
	// Acked are the newly acknowledged packets in ascending packet number
	// order, including packets that were not in flight.
	Acked []PacketInfo
	// AckedBytes is the number of in-flight bytes among Acked.
	AckedBytes int64
	// PriorInFlight and BytesInFlight are the bytes in flight before and
	// after the frame was processed.
	PriorInFlight, BytesInFlight int64
	// RTT is the estimator, already updated with this frame's sample when
	// HasRTTSample.
	RTT          *RTTStats
	HasRTTSample bool
	// Delivered is the connection's delivered byte count after the frame.
	Delivered int64
	// Rate is the delivery-rate sample of this frame.
	Rate RateSample
}

// CongestionCause is what signalled congestion.
type CongestionCause uint8

const (
	CauseLoss CongestionCause = iota
	CauseECN
	// CauseFECRecovered: the peer recovered packets with FEC, and the
	// policy counts them as congestion (FECSignal, or FECAuto on a path
	// that shows it).
	CauseFECRecovered
)

func (c CongestionCause) String() string {
	switch c {
	case CauseLoss:
		return "loss"
	case CauseECN:
		return "ecn"
	case CauseFECRecovered:
		return "fec_recovered"
	}
	return "invalid"
}

// CongestionEvent is a congestion signal.
type CongestionEvent struct {
	Cause CongestionCause
	// LostBytes is the number of in-flight bytes lost (or recovered by
	// the peer) in this event; zero for ECN.
	LostBytes int64
	// LargestSentTime is the send time of the newest packet concerned. A
	// window-based controller reduces at most once per recovery period:
	// only if this packet was sent after the period began (RFC 9002
	// appendix B.6).
	LargestSentTime time.Duration
	// Persistent: the losses establish persistent congestion (RFC 9002
	// section 7.6); the window collapses to the minimum.
	Persistent bool
	// PriorInFlight and BytesInFlight are the bytes in flight before and
	// after the lost packets were removed.
	PriorInFlight, BytesInFlight int64
	// Handshake: the lost packets were Initial or Handshake packets
	// (handshake_loss.go).
	Handshake bool
	// CEPackets is, for ECN, the increase of the peer's ECN-CE counter:
	// how many packets were marked.
	CEPackets uint64
}

// Phase is a controller's state, named as in qlog's congestion_state_updated
// event.
type Phase uint8

const (
	PhaseSlowStart Phase = iota
	// PhaseConservativeSlowStart is HyStart++'s CSS (RFC 9406 section 4.2).
	PhaseConservativeSlowStart
	PhaseCongestionAvoidance
	PhaseRecovery
	PhaseApplicationLimited
	// PhaseOther is a custom controller's phase of a name of its own
	// (ControllerState.CustomPhase).
	PhaseOther
)

func (p Phase) String() string {
	switch p {
	case PhaseSlowStart:
		return "slow_start"
	case PhaseConservativeSlowStart:
		return "conservative_slow_start"
	case PhaseCongestionAvoidance:
		return "congestion_avoidance"
	case PhaseRecovery:
		return "recovery"
	case PhaseApplicationLimited:
		return "application_limited"
	case PhaseOther:
		return "other"
	}
	return "invalid"
}

// InfiniteSSThresh is the slow start threshold before the first congestion
// event.
const InfiniteSSThresh = math.MaxInt

// ControllerState is a snapshot of a controller for qlog and statistics.
type ControllerState struct {
	Algorithm Algorithm
	Phase     Phase
	// Window and SSThresh are in bytes; SSThresh is InfiniteSSThresh
	// before the first congestion event.
	Window, SSThresh int
	// RecoveryStart is when the current or last recovery period began;
	// meaningful when Reductions > 0.
	RecoveryStart time.Duration
	// Reductions counts window reductions (at most one per recovery
	// period).
	Reductions uint64
	// WMax and K are CUBIC's W_max (bytes) and K (RFC 9438 section 4.2);
	// zero for other controllers.
	WMax int
	K    time.Duration
	// BBR is BBR's state and model; its State is BBRNone for other
	// controllers.
	BBR BBRSnapshot
	// CustomName and CustomPhase are a custom controller's own names for
	// itself and its phase (congestion.State); empty for the built-in
	// controllers. AlgorithmName and PhaseName read them.
	CustomName, CustomPhase string
}

// AlgorithmName names the controller: a custom controller by its own name,
// a built-in one by its Algorithm.
func (s ControllerState) AlgorithmName() string {
	if s.Algorithm == Custom {
		return s.CustomName
	}
	return s.Algorithm.String()
}

// PhaseName names the controller's phase as qlog does: a custom
// controller's own name for it, or the Phase of a built-in one.
func (s ControllerState) PhaseName() string {
	if s.Algorithm == Custom {
		return s.CustomPhase
	}
	return s.Phase.String()
}

// newController builds the configured built-in controller; New wraps
// Config.Custom's instead when it is set (newCustomController).
func newController(cfg *Config) Controller {
	switch cfg.Algorithm {
	case NewReno:
		return newNewReno(cfg)
	case BBR:
		return newBBR(cfg)
	}
	return newCubic(cfg)
}

// rebuiltDeliveredController is a controller whose model counts a packet
// the peer rebuilt with FEC as delivered whatever the FEC policy (BBR's
// rate samples): under FECSignal it is told of the rebuilt packets by
// OnAck too, after the congestion event that reports them lost.
type rebuiltDeliveredController interface {
	Controller
	countsRebuiltAsDelivered()
}

func (*bbr) countsRebuiltAsDelivered() {}
