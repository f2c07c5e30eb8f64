package core

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// The recovery events of the qlog QUIC schema
// (draft-ietf-quic-qlog-quic-events, "Recovery events"), from which qvis
// draws a connection's congestion graphs: metrics_updated (RTT estimates,
// congestion window, bytes in flight, slow start threshold, pacing rate),
// congestion_state_updated (the controller's phase, with what moved it)
// and packet_lost (with the rule that declared the loss).

// qlogRecovery is what the recovery events last logged, so that each
// event carries only what changed.
type qlogRecovery struct {
	metrics  qlogMetrics
	phase    string
	hasPhase bool
	ceMarks  uint64 // the sender's ECN-CE increases at the last check
}

// qlogMetrics are the fields of recovery:metrics_updated.
type qlogMetrics struct {
	minRTT, srtt, latest, rttVar time.Duration
	ptoCount                     int
	cwnd                         int
	inFlight                     int64
	ssthresh                     int    // recovery.InfiniteSSThresh: not logged
	pacingRate                   uint64 // bits per second
}

func senderMetrics(s *recovery.Sender) qlogMetrics {
	rtt := s.RTT()
	return qlogMetrics{
		minRTT: rtt.MinRTT(), srtt: rtt.SmoothedRTT(), latest: rtt.LatestRTT(), rttVar: rtt.RTTVar(),
		ptoCount: s.PTOCount(), cwnd: s.CongestionWindow(), inFlight: s.BytesInFlight(),
		ssthresh: s.ControllerState().SSThresh, pacingRate: s.PacingRate() * 8,
	}
}

// metricsUpdated logs at now recovery:metrics_updated with the metrics of
// the sender that changed since the last time, as the draft asks (a field
// repeated with the same value is allowed, but only updates SHOULD be
// logged); nothing when none did.
func (q *qlogger) metricsUpdated(now time.Duration, s *recovery.Sender) {
	if q.off() {
		return
	}
	m, last := senderMetrics(s), q.cc.metrics
	if m == last {
		return
	}
	q.cc.metrics = m
	b := q.begin(now, "recovery:metrics_updated")
	// Each field starts with a comma; the first one's is dropped below.
	start := len(b)
	b = appendMillisField(b, "min_rtt", m.minRTT, last.minRTT)
	b = appendMillisField(b, "smoothed_rtt", m.srtt, last.srtt)
	b = appendMillisField(b, "latest_rtt", m.latest, last.latest)
	b = appendMillisField(b, "rtt_variance", m.rttVar, last.rttVar)
	b = appendUintField(b, "pto_count", uint64(m.ptoCount), uint64(last.ptoCount))
	b = appendUintField(b, "congestion_window", uint64(m.cwnd), uint64(last.cwnd))
	b = appendUintField(b, "bytes_in_flight", uint64(m.inFlight), uint64(last.inFlight))
	if m.ssthresh != recovery.InfiniteSSThresh {
		b = appendUintField(b, "ssthresh", uint64(m.ssthresh), uint64(last.ssthresh))
	}
	b = appendUintField(b, "pacing_rate", m.pacingRate, last.pacingRate)
	if len(b) > start {
		b = append(b[:start], b[start+1:]...)
	}
	q.end(b)
}

// appendMillisField appends `,"name":v` in milliseconds if v changed.
func appendMillisField(b []byte, name string, v, last time.Duration) []byte {
	if v == last {
		return b
	}
	b = appendFieldName(b, name)
	return appendMillis(b, v)
}

// appendUintField appends `,"name":v` if v changed.
func appendUintField(b []byte, name string, v, last uint64) []byte {
	if v == last {
		return b
	}
	b = appendFieldName(b, name)
	return strconv.AppendUint(b, v, 10)
}

func appendFieldName(b []byte, name string) []byte {
	b = append(b, `,"`...)
	b = append(b, name...)
	return append(b, `":`...)
}

// Triggers of recovery:congestion_state_updated. The draft names
// persistent_congestion and ECN and leaves the field open to others.
const (
	qlogTriggerPersistent = "persistent_congestion"
	qlogTriggerECN        = "ECN"
	qlogTriggerLoss       = "loss"
	qlogTriggerFEC        = "fec_recovered"
)

// congestionTrigger names the congestion signal that loss recovery's
// result res brought, if any: persistent congestion, an increase of the
// ECN-CE count (the sender's counter moved since the last check), packets
// declared lost, or packets the peer rebuilt with FEC (a congestion signal
// under recovery.FECSignal). Empty when the result brought none: a phase
// change then is the controller's own progression (an ACK ending a
// recovery period, slow start ending).
func (q *qlogger) congestionTrigger(res *recovery.Result, s *recovery.Sender, fecSignals bool) string {
	if q.off() {
		return ""
	}
	ce := s.Stats().ECNCEIncreases
	marked := ce != q.cc.ceMarks
	q.cc.ceMarks = ce
	switch {
	case res.PersistentCongestion:
		return qlogTriggerPersistent
	case marked:
		return qlogTriggerECN
	case len(res.Lost) > 0:
		return qlogTriggerLoss
	case len(res.Recovered) > 0 && fecSignals:
		return qlogTriggerFEC
	}
	return ""
}

// congestionStateUpdated logs at now recovery:congestion_state_updated
// when the controller's phase (recovery.ControllerState.PhaseName: a
// built-in controller's Phase, or a custom controller's own name for it)
// differs from the one last logged, the first time without an old state.
// It knows no phase by name, so a controller's new phases are logged as
// they come. trigger, if not empty, is the
// congestion signal that came with the change (congestionTrigger).
func (q *qlogger) congestionStateUpdated(now time.Duration, s *recovery.Sender, trigger string) {
	if q.off() {
		return
	}
	st := s.ControllerState()
	phase := st.PhaseName()
	if q.cc.hasPhase && phase == q.cc.phase {
		return
	}
	b := q.begin(now, "recovery:congestion_state_updated")
	if q.cc.hasPhase {
		b = append(b, `"old":`...)
		b = appendJSONString(b, q.cc.phase)
		b = append(b, ',')
	}
	b = append(b, `"new":`...)
	b = appendJSONString(b, phase)
	if trigger != "" {
		b = append(b, `,"trigger":"`...)
		b = append(b, trigger...)
		b = append(b, '"')
	}
	q.cc.phase, q.cc.hasPhase = phase, true
	q.end(b)
}

// packetLost logs at now recovery:packet_lost for packet p of type pt
// (sentPacketType), with the rule that declared it lost, and whether it
// was a path MTU probe.
func (q *qlogger) packetLost(now time.Duration, pt wire.PacketType, p recovery.PacketInfo) {
	if q.off() {
		return
	}
	b := q.begin(now, "recovery:packet_lost")
	b = appendQlogHeader(b, pt, p.Number)
	if p.PathProbe {
		b = append(b, `,"is_mtu_probe_packet":true`...)
	}
	if p.LossTrigger != 0 {
		b = append(b, `,"trigger":"`...)
		b = append(b, p.LossTrigger.String()...)
		b = append(b, '"')
	}
	q.end(b)
}

// appendJSONString appends s as a JSON string (RFC 8259 section 7): a
// custom congestion controller names its phase itself, so the name may
// hold quotes, backslashes, control characters or invalid UTF-8, which
// are escaped or replaced so that the qlog stays valid JSON.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			// An invalid byte reads as utf8.RuneError, appended as U+FFFD.
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}
