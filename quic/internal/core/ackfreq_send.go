package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// The sending side of the ACK frequency extension
// (draft-ietf-quic-ack-frequency-14): what this endpoint, as a data
// sender, asks a peer that offered min_ack_delay for.
//
// The policy, for long and asymmetric paths. RFC 9000 section 13.2.2's ACK
// every second packet costs a 3 Mbit/s satellite return link dearly under
// a 250 Mbit/s downlink: 21,500 packets of 1452 bytes a second, 10,750
// ACKs of about 42 bytes, 3.6 Mbit/s, more than the return link carries.
// Section 8.1 of the draft asks that a sender keep at least one ACK per
// round trip: a Requested Max Ack Delay no more than the RTT and an
// Ack-Eliciting Threshold no more than the packets of a congestion
// window. Within that, ACKs carry the sender's clock: the congestion
// controller's growth, its rate samples and loss detection all come from
// them, so fewer ACKs should stay many per round trip.
//
//   - Packets per ACK: the congestion window in packets divided by
//     AcksPerRTT (128), at least 2 (the RFC's default, threshold 1) and at
//     most MaxPacketsPerAck (256). On geo-large (600 ms, 18.75 MB
//     bandwidth-delay product, 12,900 packets) BBR's window of about two
//     products asks for one ACK per 200 packets: 65 ACKs of 42 bytes per
//     round trip, about 4.5 kB/s, 1.2% of the return link and 0.015% of
//     the bytes sent. A window of 256 packets or less asks for nothing
//     (short paths and small windows keep the peer's own policy).
//   - Not in the first slow start: section 8.1.1 warns that fewer ACKs
//     there slow the window's growth, and so it did: a request as the
//     window jumped in BBR's Startup made geo-large's 100 MB 12 ms slower
//     than the peer's own thinning (ackrate.go), which starts low and
//     grows with the rate. The first request waits until slow start ends.
//   - Max ack delay: an eighth of the smoothed RTT (section 8.1 wants it
//     below the RTT and from the smoothed RTT, not the minimum), at least
//     the peer's min_ack_delay and at most MaxRequestedAckDelay (100 ms):
//     75 ms on GEO, where a flow below its window still gets eight ACKs a
//     round trip; 3.75 ms on a 30 ms path. It lengthens the probe timeout
//     by no more than that.
//   - Reordering threshold: recovery's packet threshold (3), as section 9
//     advises: the peer acknowledges a gap just when the sender can
//     declare the packet lost, and not for shorter reordering. On
//     geo-interop, whose 25-packet queue drops bursts, 1 (the RFC's rule)
//     and 3 cost the same ACKs within 1% and the same time within the
//     spread of seeds.
//   - Updates: a new frame when the packets per ACK would halve or double,
//     the delay move by a quarter or the reordering threshold change, at
//     most once per smoothed RTT (section 8.1: "not more than once per
//     RTT"), from the ACKs that change the window.
//   - IMMEDIATE_ACK, while a request thins the peer's ACKs: in probe
//     packets (section 7: no wait for the delay, and the PTO may then
//     leave the peer's max_ack_delay out), with the last data before the
//     sender runs out of data (section 8.1.1: no wait at the end of a
//     response or a transfer), and in the first packet sent with nothing
//     in flight (section 8.1.1: after an idle period).
//
// The probe timeout uses the largest of the max_ack_delay in force (the
// transport parameter, then the value of the newest acknowledged frame)
// and those of the frames in flight (section 7); recovery's Sender is told
// whenever that changes.

// maxAckFreqInFlight bounds the ACK_FREQUENCY frames in flight whose
// delay the probe timeout must cover; at one frame per RTT a few are
// outstanding at most, and a new frame waits while this many are.
const maxAckFreqInFlight = 4

// ackFreqRequest is what one ACK_FREQUENCY frame asks for.
type ackFreqRequest struct {
	perAck  int // packets per ACK: the Ack-Eliciting Threshold plus one
	delay   time.Duration
	reorder uint64
}

// frame is the ACK_FREQUENCY frame of the request with sequence number seq.
func (q ackFreqRequest) frame(seq uint64) wire.AckFrequencyFrame {
	return wire.AckFrequencyFrame{SequenceNumber: seq, AckElicitingThreshold: uint64(q.perAck - 1),
		RequestedMaxAckDelay: q.delay, ReorderingThreshold: q.reorder}
}

// ackFreqInFlight is a sent ACK_FREQUENCY frame not yet acknowledged or
// lost.
type ackFreqInFlight struct {
	seq   uint64
	delay time.Duration
}

// ackFreqSend is the sender's side.
type ackFreqSend struct {
	// on: the peer offered the extension (its min_ack_delay, peerMin) and
	// this endpoint makes requests.
	on      bool
	peerMin time.Duration
	// defaults are the peer's behaviour before any frame: every second
	// packet, its max_ack_delay parameter, an ACK at any gap.
	defaults ackFreqRequest

	// want is the request to send or last sent; pending: it waits for a
	// packet; sent: a frame went out, at lastSent.
	want     ackFreqRequest
	pending  bool
	sent     bool
	lastSent time.Duration
	nextSeq  uint64

	// inFlight holds the frames sent and not yet acknowledged or lost;
	// current is the peer's max_ack_delay in force (the parameter, then
	// the newest acknowledged frame's, ackedSeq), effective what the
	// probe timeout uses.
	inFlight  []ackFreqInFlight
	current   time.Duration
	ackedSeq  uint64
	hasAcked  bool
	effective time.Duration
	dirty     bool

	framesSent, immediateSent uint64
}

// start turns requests on for a peer whose min_ack_delay is peerMin and
// max_ack_delay peerMax.
func (s *ackFreqSend) start(peerMin, peerMax time.Duration) {
	s.on, s.peerMin = true, peerMin
	s.defaults = ackFreqRequest{perAck: 2, delay: peerMax, reorder: 1}
	s.want = s.defaults
	s.current, s.effective = peerMax, peerMax
}

// target is the request for a congestion window of cwnd bytes in packets
// of maxDatagram bytes, a smoothed RTT srtt and loss detection's packet
// threshold (see the policy above).
func (s *ackFreqSend) target(cfg *AckFrequencyConfig, cwnd, maxDatagram int, srtt time.Duration, packetThreshold uint64) ackFreqRequest {
	perAck := min(max(cwnd/max(maxDatagram, 1)/cfg.AcksPerRTT, 2), cfg.MaxPacketsPerAck)
	delay := min(srtt/8, cfg.MaxRequestedAckDelay)
	// peerMin is whole microseconds: truncating keeps the delay at or
	// above it, and makes it encodable.
	delay = max(delay, s.peerMin).Truncate(time.Microsecond)
	return ackFreqRequest{perAck: perAck, delay: delay, reorder: packetThreshold}
}

// thins reports whether the request in force lets the peer hold ACKs
// longer than by default, so that IMMEDIATE_ACK is worth sending.
func (s *ackFreqSend) thins() bool {
	return s.on && s.sent && (s.want.perAck > 2 || s.want.delay > s.defaults.delay)
}

// update queues a frame at now when the request for the path (t) differs
// enough from the one last sent: the first one that differs from the
// peer's defaults, then one per smoothed RTT at most.
func (s *ackFreqSend) update(now, srtt time.Duration, t ackFreqRequest) {
	if !s.on || len(s.inFlight) >= maxAckFreqInFlight {
		return
	}
	if s.pending {
		s.want = t
		return
	}
	if !s.sent && t.perAck <= s.defaults.perAck {
		// Nothing to save yet: the peer keeps its own policy (a
		// satquic peer thins by the rate it sees, ackrate.go).
		return
	}
	if s.sent && now-s.lastSent < srtt {
		return
	}
	if !changed(s.want, t) {
		return
	}
	s.want, s.pending = t, true
}

// changed reports whether request b differs from a enough for a new
// frame: packets per ACK halved or doubled, the delay moved by a quarter,
// or another reordering threshold.
func changed(a, b ackFreqRequest) bool {
	return b.perAck >= 2*a.perAck || 2*b.perAck <= a.perAck ||
		4*absDuration(b.delay-a.delay) >= a.delay || a.reorder != b.reorder
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// appendFrame appends the pending ACK_FREQUENCY frame to w if it fits.
func (s *ackFreqSend) appendFrame(now time.Duration, w *packetWriter) {
	if !s.pending {
		return
	}
	f := s.want.frame(s.nextSeq)
	if !w.appendFrame(f.Len(), f.Append) {
		return
	}
	w.record(sentFrame{kind: fkAckFrequency, id: s.nextSeq})
	s.inFlight = append(s.inFlight, ackFreqInFlight{seq: s.nextSeq, delay: s.want.delay})
	s.nextSeq++
	s.pending, s.sent, s.lastSent = false, true, now
	s.framesSent++
	s.refresh()
}

// onAcked handles the acknowledgement of the frame with sequence number
// seq: the peer applies it unless it processed a newer one (section 4).
func (s *ackFreqSend) onAcked(seq uint64) {
	f, ok := s.take(seq)
	if ok && (!s.hasAcked || seq > s.ackedSeq) {
		s.current, s.ackedSeq, s.hasAcked = f.delay, seq, true
	}
	s.refresh()
}

// onLost handles the loss of the frame with sequence number seq: a new
// frame with the current request goes out unless a newer one was sent
// (section 4 encourages it). A probe resends the content of packets in
// flight this way too: the frame then goes again, a little early.
func (s *ackFreqSend) onLost(seq uint64) {
	if _, ok := s.take(seq); ok && seq+1 == s.nextSeq {
		s.pending = true
	}
	s.refresh()
}

// take removes the frame seq from those in flight.
func (s *ackFreqSend) take(seq uint64) (ackFreqInFlight, bool) {
	for i, f := range s.inFlight {
		if f.seq == seq {
			s.inFlight = append(s.inFlight[:i], s.inFlight[i+1:]...)
			return f, true
		}
	}
	return ackFreqInFlight{}, false
}

// refresh recomputes the max_ack_delay the probe timeout uses: the largest
// of the one in force and those in flight (section 7); dirty tells the
// connection to hand it to loss recovery.
func (s *ackFreqSend) refresh() {
	e := s.current
	for _, f := range s.inFlight {
		e = max(e, f.delay)
	}
	if e != s.effective {
		s.effective, s.dirty = e, true
	}
}
