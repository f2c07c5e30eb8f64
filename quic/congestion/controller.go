package congestion

import "time"

// Controller is a congestion controller: it owns the congestion window
// and the pacing rate of one connection, which tells it about every packet
// sent, acknowledged and lost. The package documentation says when each
// method is called and what the connection does with odd answers.
type Controller interface {
	// OnPacketSent is called for every packet that counts toward bytes in
	// flight (RFC 9002 section 2: ack-eliciting or padded), as it is
	// sent at now, with its size and the bytes in flight before it.
	OnPacketSent(now time.Duration, bytes int, priorInFlight int64)
	// OnAck is called once per ACK frame that newly acknowledges packets,
	// after OnCongestionEvent when the same frame also revealed losses
	// or ECN marks. It is also called for the packets the peer reports
	// it rebuilt with FEC when the FEC policy (quic.FECConfig.Policy)
	// counts them as delivered.
	OnAck(now time.Duration, ev *AckEvent)
	// OnCongestionEvent is called when in-flight packets are declared
	// lost, when the peer reports an increase of its ECN-CE counter, and
	// when the peer reports packets it rebuilt with FEC that the FEC
	// policy counts as congestion.
	OnCongestionEvent(now time.Duration, ev *CongestionEvent)
	// Window is the congestion window: the most bytes in flight allowed.
	Window() int
	// PacingRate is the rate, in bytes per second, at which the pacer
	// releases packets; zero derives it from the window. rtt is the
	// connection's current estimate.
	PacingRate(rtt RTT) uint64
	// InSlowStart reports whether the window grows exponentially.
	InSlowStart() bool
	// SetMaxDatagramSize follows a change of the packet size, n bytes
	// (path MTU discovery, RFC 9000 section 14): the minimum and initial
	// windows are counted in packets of that size.
	SetMaxDatagramSize(n int)
	// State describes the controller for ConnectionStats and qlog.
	State() State
}

// RTT is a snapshot of the connection's RTT estimator (RFC 9002 section
// 5). Before the first sample, Smoothed is the initial RTT, Var half of
// it, and Latest and Min are zero.
type RTT struct {
	// Latest is the most recent sample, as measured (ACK delay
	// included).
	Latest time.Duration
	// Min is the smallest sample (section 5.2), not adjusted for ACK
	// delay.
	Min time.Duration
	// Smoothed and Var are smoothed_rtt and rttvar (section 5.3).
	Smoothed, Var time.Duration
	// HasSample: at least one sample was taken.
	HasSample bool
}

// AckedPacket is a packet an ACK newly acknowledged.
type AckedPacket struct {
	// Number is the packet number, within its packet number space (the
	// handshake's Initial and Handshake packets have spaces of their own).
	Number uint64
	// Bytes is the size of the UDP payload the packet occupied.
	Bytes int
	// TimeSent is when it was sent.
	TimeSent time.Duration
	// AppLimited: it was sent while the application had less to send
	// than the window allowed, so its acknowledgement says little about
	// the path's capacity (RFC 9002 section 7.8).
	AppLimited bool
}

// AckEvent is what one ACK frame taught the sender.
type AckEvent struct {
	// Acked are the newly acknowledged in-flight packets, in ascending
	// packet number order. Packets that carried only ACK frames are not
	// in flight and not listed, so Acked is empty when the frame
	// acknowledged nothing else.
	Acked []AckedPacket
	// AckedBytes is the sum of Acked's sizes.
	AckedBytes int64
	// PriorInFlight and BytesInFlight are the bytes in flight before and
	// after the frame was processed.
	PriorInFlight, BytesInFlight int64
	// RTT is the estimator after the frame; RTTUpdated says whether the
	// frame gave it a new sample (it does when it newly acknowledges its
	// largest packet number and that packet was ack-eliciting, RFC 9002
	// section 5.1).
	RTT        RTT
	RTTUpdated bool
	// Delivered is the connection's count of bytes delivered so far,
	// this frame included.
	Delivered int64
	// Rate is the delivery-rate sample of this frame.
	Rate RateSample
}

// RateSample is a delivery-rate sample
// (draft-cheng-iccrg-delivery-rate-estimation section 3.3): how many bytes
// were delivered over what interval, measured from the newest packet an
// ACK acknowledged. A model-based controller (BBR) builds its estimate of
// the bottleneck bandwidth from these samples.
type RateSample struct {
	// HasData: the ACK acknowledged at least one in-flight packet.
	HasData bool
	// Valid: Interval and DeliveryRate are meaningful; the interval is at
	// least the minimum RTT, as a shorter one would overestimate the rate.
	Valid bool
	// DeliveryRate is Delivered / Interval in bytes per second.
	DeliveryRate uint64
	// Delivered is the number of bytes delivered over Interval.
	Delivered int64
	// Interval is the longer of SendElapsed and AckElapsed.
	Interval time.Duration
	// SendElapsed and AckElapsed are the send and acknowledgement
	// intervals of the sample.
	SendElapsed, AckElapsed time.Duration
	// PriorDelivered and PriorTime are the connection's delivered count
	// and delivered time when the newest acknowledged packet was sent.
	PriorDelivered int64
	PriorTime      time.Duration
	// AppLimited: the newest acknowledged packet was sent while
	// application limited, so the rate may underestimate the path.
	AppLimited bool
	// RTT is the time from sending the newest acknowledged packet to its
	// acknowledgement.
	RTT time.Duration
	// NewlyAcked and NewlyLost are the bytes this ACK acknowledged and
	// declared lost.
	NewlyAcked, NewlyLost int64
	// TxInFlight is the bytes in flight just after the newest
	// acknowledged packet was sent, and Lost the bytes declared lost
	// since then.
	TxInFlight, Lost int64
}

// Cause is what signalled congestion.
type Cause uint8

const (
	// CauseLoss: in-flight packets were declared lost (RFC 9002 section
	// 6).
	CauseLoss Cause = iota
	// CauseECN: the peer reported an increase of its ECN-CE counter (RFC
	// 9002 section 7.1, RFC 9000 section 13.4).
	CauseECN
	// CauseFECRecovered: the peer rebuilt lost packets with forward
	// erasure correction, and the FEC policy counts them as congestion
	// (the data arrived, but the packets were lost on the way).
	CauseFECRecovered
)

func (c Cause) String() string {
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
	Cause Cause
	// LostBytes is the number of in-flight bytes lost (or rebuilt by the
	// peer) in this event; zero for ECN.
	LostBytes int64
	// LargestSentTime is when the newest packet concerned was sent. A
	// window-based controller reduces its window at most once per round
	// trip: only if this packet was sent after its last reduction (RFC
	// 9002 section 7.3.2 and appendix B.6).
	LargestSentTime time.Duration
	// Persistent: the losses establish persistent congestion (RFC 9002
	// section 7.6), after which RFC 9002 collapses the window to the
	// minimum.
	Persistent bool
	// PriorInFlight and BytesInFlight are the bytes in flight before and
	// after the lost packets were removed.
	PriorInFlight, BytesInFlight int64
	// Handshake: the lost packets were Initial or Handshake packets.
	Handshake bool
	// CEPackets is, for ECN, how many more packets the peer reports
	// marked Congestion Experienced.
	CEPackets uint64
}

// The phases the built-in controllers report in State.Phase, as qlog's
// recovery:congestion_state_updated event names them. A Controller may
// use these or names of its own.
const (
	PhaseSlowStart             = "slow_start"
	PhaseCongestionAvoidance   = "congestion_avoidance"
	PhaseRecovery              = "recovery"
	PhaseApplicationLimited    = "application_limited"
	PhaseConservativeSlowStart = "conservative_slow_start"
)

// State is a snapshot of a controller for ConnectionStats and qlog.
type State struct {
	// Name names the algorithm (ConnectionStats.CongestionControl);
	// empty reads as "custom".
	Name string
	// Phase is the controller's state (ConnectionStats.CongestionState
	// and qlog's congestion_state_updated, logged each time it changes).
	Phase string
	// Window is the congestion window in bytes, as Window returns it.
	// Stats and qlog report the window the connection applies: Window's
	// answer within the bounds the package documentation gives.
	Window int
	// SSThresh is the slow start threshold in bytes; zero when there is
	// none (before the first congestion event, or for a controller
	// without one).
	SSThresh int
	// Reductions counts the window's reductions, and RecoveryStart is
	// when the last one began; both zero for a controller that does not
	// count them.
	Reductions    uint64
	RecoveryStart time.Duration
}
