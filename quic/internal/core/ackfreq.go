package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// The ACK frequency extension (draft-ietf-quic-ack-frequency-14), on when
// Config.AckFrequency is set. This endpoint offers min_ack_delay (section
// 3), honours the ACK_FREQUENCY and IMMEDIATE_ACK frames of a peer
// (ackfreq_recv.go, with ack.go's rules), and asks a peer that offered
// min_ack_delay for fewer ACKs on large windows (ackfreq_send.go).
// Without the offer the frames are unknown ones, a FRAME_ENCODING_ERROR
// (RFC 9000 section 12.4), and none is sent to a peer that did not offer
// it (principle 5 of docs/architecture.md).

// ackFrequency is the connection's state of the extension.
type ackFrequency struct {
	cfg  *AckFrequencyConfig // nil: off
	recv ackFreqRecv
	send ackFreqSend
	// peerOffered: the peer sent min_ack_delay.
	peerOffered bool
}

func newAckFrequency(cfg *AckFrequencyConfig) ackFrequency {
	a := ackFrequency{cfg: cfg}
	if cfg != nil {
		a.recv.minAckDelay = cfg.MinAckDelay.Truncate(time.Microsecond)
	}
	return a
}

// addParam offers the extension in the transport parameters p.
func (a *ackFrequency) addParam(p *wire.TransportParameters) error {
	if a.cfg == nil {
		return nil
	}
	return p.SetMinAckDelay(a.recv.minAckDelay)
}

// onPeerParams notes the peer's offer, if it made one; a malformed one is
// a TRANSPORT_PARAMETER_ERROR (section 3). A client never keeps the
// parameter for a later connection: it comes from this handshake.
func (a *ackFrequency) onPeerParams(p *wire.TransportParameters) error {
	if a.cfg == nil {
		return nil
	}
	peerMin, ok, err := p.MinAckDelay()
	if err != nil || !ok {
		return err
	}
	a.peerOffered = true
	if !a.cfg.NoRequests {
		a.send.start(peerMin, p.MaxAckDelay())
	}
	return nil
}

// onAckFrequencyFrame handles ACK_FREQUENCY and IMMEDIATE_ACK frames, which
// only an endpoint that offered the extension knows.
func (c *Conn) onAckFrequencyFrame(f wire.Frame) error {
	if c.ackFreq.cfg == nil {
		return transportError(wire.CodeFrameEncodingError, f.Type(), "unknown frame type 0x%x", uint64(f.Type()))
	}
	if af, ok := f.(*wire.AckFrequencyFrame); ok {
		return c.ackFreq.recv.onAckFrequency(af)
	}
	c.ackFreq.recv.onImmediateAck()
	return nil
}

// updateAckFrequency asks for a new request when the window or the RTT
// moved enough, once the handshake is complete (1-RTT packets only) and
// the first slow start ended (ackfreq_send.go).
func (c *Conn) updateAckFrequency(now time.Duration) {
	s := &c.ackFreq.send
	if !s.on || !c.handshakeComplete || (!s.sent && c.sender.InSlowStart()) {
		return
	}
	srtt := c.sender.RTT().SmoothedRTT()
	t := s.target(c.ackFreq.cfg, c.sender.CongestionWindow(), c.maxDatagram, srtt, c.cfg.Recovery.PacketThreshold)
	s.update(now, srtt, t)
}

// syncPeerAckDelay gives loss recovery the peer's max_ack_delay the probe
// timeout must cover (section 7) when it changed.
func (c *Conn) syncPeerAckDelay(now time.Duration) {
	s := &c.ackFreq.send
	if !s.dirty {
		return
	}
	s.dirty = false
	if err := c.sender.SetPeerMaxAckDelay(now, s.effective); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "max_ack_delay: %v", err))
	}
}

// appendAckFrequency appends a pending ACK_FREQUENCY frame to a 1-RTT
// packet.
func (c *Conn) appendAckFrequency(now time.Duration, w *packetWriter) {
	if !w.current().early {
		c.ackFreq.send.appendFrame(now, w)
		c.syncPeerAckDelay(now)
	}
}

// appendImmediateAck appends IMMEDIATE_ACK to the 1-RTT packet being built
// when it helps and a request of ours thins the peer's ACKs: a probe,
// whose ACK should not wait (section 7); the first ack-eliciting packet
// with nothing in flight, after an idle period; and the last data before
// the sender runs out of data, so that the end of a response or a
// transfer is acknowledged at once (section 8.1.1).
func (c *Conn) appendImmediateAck(w *packetWriter) {
	p := w.current()
	if p.early || !c.ackFreq.send.thins() || !p.ackEliciting || w.room() < 1 {
		return
	}
	probe := c.sender.ProbesPending(spaceApp) > 0
	idle := c.sender.BytesInFlight() == 0
	if !probe && !idle && !(hasStreamFrame(w.currentFrames()) && !c.hasAppData()) {
		return
	}
	var f wire.ImmediateAckFrame
	if w.appendFrame(f.Len(), f.Append) {
		w.record(sentFrame{kind: fkImmediateAck})
		c.ackFreq.send.immediateSent++
	}
}

// AckFrequencyStats reports the ACK frequency extension at one end.
type AckFrequencyStats struct {
	// Offered: this endpoint offered the extension; PeerOffered: the peer
	// did, so that this endpoint may ask it.
	Offered, PeerOffered bool
	// FramesSent and ImmediateAcksSent count the frames this endpoint
	// sent; PacketsPerAck and MaxAckDelay are its last request.
	FramesSent, ImmediateAcksSent uint64
	PacketsPerAck                 int
	MaxAckDelay                   time.Duration
	// FramesReceived and ImmediateAcksReceived count the peer's frames;
	// PeerPacketsPerAck and PeerMaxAckDelay are the request in force
	// (0 while none is).
	FramesReceived, ImmediateAcksReceived uint64
	PeerPacketsPerAck                     int
	PeerMaxAckDelay                       time.Duration
}

func (a *ackFrequency) stats() AckFrequencyStats {
	s := AckFrequencyStats{
		Offered: a.cfg != nil, PeerOffered: a.peerOffered,
		FramesSent: a.send.framesSent, ImmediateAcksSent: a.send.immediateSent,
		FramesReceived: a.recv.framesReceived, ImmediateAcksReceived: a.recv.immediateReceived,
	}
	if a.send.sent {
		s.PacketsPerAck, s.MaxAckDelay = a.send.want.perAck, a.send.want.delay
	}
	if a.recv.inForce {
		s.PeerPacketsPerAck, s.PeerMaxAckDelay = a.recv.threshold, a.recv.maxDelay
	}
	return s
}
