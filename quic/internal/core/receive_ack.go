package core

// The receive path, stage 5 of 6, for ACK frames: loss recovery (package
// recovery's Sender) takes them in and reports which of the packets sent
// are acknowledged and which are lost. Each frame an acknowledged packet
// carried is done, each of a lost one is queued again, with fresh values
// where they changed (RFC 9000 section 13.3), by the state that sent it:
// onFrameAcked and onFrameLost only dispatch. The methods after them are
// the reactions of the stream map, connection flow control and connection
// IDs to their frames' fate (stream data and the streams' own control
// frames have theirs in streams_send.go). What probe timeouts need is
// queued too. Loss recovery's timer and FEC_RECOVERED
// frames (fec_conn.go) report the same way, through onRecoveryResult.
//
// The other frames' handlers are with their state (see receive_frames.go).
// Next, once the frames are handled: ack.go, the packet's own
// acknowledgement.

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// onAckFrame feeds an ACK frame to loss recovery (RFC 9002 appendix A.7)
// and acts on what it acknowledged and declared lost.
func (c *Conn) onAckFrame(now time.Duration, s recovery.Space, f *wire.AckFrame) error {
	exp := uint8(wire.DefaultAckDelayExponent)
	if c.hasPeer {
		exp = uint8(c.peerParams.AckDelayExponent)
	}
	ack := recovery.Ack{Ranges: f.Ranges, Delay: wire.DecodeAckDelay(f.AckDelay, exp), ECNCheck: &c.ecn}
	if f.HasECN {
		ack.ECN = &f.ECN
	}
	res, err := c.sender.OnAck(now, s, &ack)
	if err != nil {
		return transportError(wire.CodeProtocolViolation, f.Type(), "%v", err)
	}
	sp := c.spaces[s]
	if l := f.Ranges[0].Largest; sp.largestAcked == wire.InvalidPacketNumber || l > sp.largestAcked {
		sp.largestAcked = l
	}
	c.onRecoveryResult(now, res)
	return nil
}

// onRecoveryResult acts on what loss recovery reports: acknowledged frames
// are done, lost ones are queued again (RFC 9000 section 13.3), probes
// are owed. The Result is copied first because handling it may call the
// Sender again.
func (c *Conn) onRecoveryResult(now time.Duration, res *recovery.Result) {
	// Under any policy but hide, a rebuilt packet may signal congestion.
	trigger := c.qlog.congestionTrigger(res, c.sender, c.cfg.Recovery.FECPolicy != recovery.FECHide)
	c.onLossRepairResult(now, res)
	c.fec.onRecoveryResult(res)
	acked := append(c.scratch().acked[:0], res.Acked...)
	acked = append(acked, res.Recovered...)
	lost := append(c.scratch().lost[:0], res.Lost...)
	probe := res.Probe
	c.stats.PacketsLost += uint64(len(res.Lost))
	b := c.scratch()
	b.acked, b.lost = acked, lost
	confirm := false
	for _, p := range acked {
		if c.onPacketAcked(p) {
			confirm = true
		}
	}
	for _, p := range lost {
		c.onPacketLost(now, p)
	}
	if probe.Count > 0 {
		c.onProbe(probe)
	}
	c.qlog.metricsUpdated(now, c.sender)
	c.qlog.congestionStateUpdated(now, c.sender, trigger)
	c.notePhase(now)
	c.streams.wakeWriters()
	c.maySendPathState(now)
	c.updateAckFrequency(now)
	c.syncPeerAckDelay(now)
	if confirm && c.isClient && c.handshakeComplete {
		// RFC 9001 section 4.1.2: the acknowledgement of a 1-RTT packet
		// confirms the handshake for the client.
		c.confirmHandshake(now)
	}
}

// onPacketAcked handles the frames of an acknowledged packet and reports
// whether it was a 1-RTT packet.
func (c *Conn) onPacketAcked(p recovery.PacketInfo) bool {
	sp := c.spaces[p.Space]
	if sp.discarded {
		return false
	}
	for _, f := range sp.sent.take(p.Number) {
		c.onFrameAcked(sp, f)
	}
	sp.sent.compact()
	if p.Space == spaceApp && c.early.isOneRTT(p.Number) {
		c.ku.onAcked(p.Number)
		return true
	}
	return false
}

// onPacketLost queues again what a lost packet carried.
func (c *Conn) onPacketLost(now time.Duration, p recovery.PacketInfo) {
	sp := c.spaces[p.Space]
	if sp.discarded {
		return
	}
	if rec := sp.sent.at(p.Number); rec != nil && rec.live {
		c.ecn.onLost(now, rec)
	}
	frames := sp.sent.take(p.Number)
	if c.debugf != nil {
		c.debugf("%v lost %v pn %d frames %v", now, p.Space, p.Number, frames)
	}
	c.qlog.packetLost(now, sentPacketType(p.Space, p.Number, c.isClient, &c.early), p)
	if carriesData(frames) {
		c.stats.PacketsRetransmitted++
	}
	for _, f := range frames {
		if f.kind == fkAck {
			// RFC 9000 section 13.3: what a lost ACK frame reported
			// is sent again.
			sp.acks.onAckLost(now, f.id, lostAckPolicy(p.Space, &c.cfg, &c.ackFreq.recv))
			continue
		}
		c.onFrameLost(sp, f)
	}
	sp.sent.compact()
}

// onFrameAcked completes a frame the peer received: the state that sent it
// learns it arrived.
func (c *Conn) onFrameAcked(sp *pnSpace, f sentFrame) {
	switch f.kind {
	case fkAck:
		sp.acks.onAckAcked(f.id)
	case fkCrypto:
		sp.cryptoSend.onAck(f.off, f.n)
	case fkStream:
		c.streams.onStreamAcked(f)
	case fkResetStream:
		c.streams.onResetAcked(f)
	case fkNewToken:
		c.newToken.onAcked()
	case fkFECRecovered:
		c.fec.recv.onReportAcked(f.id)
	case fkAckFrequency:
		c.ackFreq.send.onAcked(f.id)
	}
}

// onFrameLost hands a lost frame to the state that sent it, which queues
// its content again, with fresh values where they changed (RFC 9000
// section 13.3).
func (c *Conn) onFrameLost(sp *pnSpace, f sentFrame) {
	switch f.kind {
	case fkCrypto:
		sp.cryptoSend.onLost(f.off, f.n)
	case fkStream:
		c.streams.onStreamLost(f)
	case fkMaxStreamsBidi, fkMaxStreamsUni:
		c.streams.onMaxStreamsLost(f)
	case fkStreamsBlockedBidi, fkStreamsBlockedUni:
		c.streams.onStreamsBlockedLost(f)
	case fkMaxStreamData, fkStopSending, fkResetStream, fkStreamDataBlocked:
		c.streams.onControlLost(f)
	case fkMaxData:
		c.flow.onMaxDataLost()
	case fkDataBlocked:
		c.flow.onDataBlockedLost(f.n)
	case fkNewConnID:
		c.cids.onNewConnIDLost(f.id)
	case fkRetireConnID:
		c.cids.queueRetire(f.id)
	case fkHandshakeDone:
		c.handshakeDonePend = true
	case fkNewToken:
		c.newToken.onLost()
	case fkBDP:
		c.bdp.onLost(f)
	case fkDatagram:
		c.dgram.onDatagramLost()
	case fkAckFrequency:
		c.ackFreq.send.onLost(f.id)
	}
}

// onResetAcked completes the sending part of a stream whose RESET_STREAM
// frame f the peer received (RFC 9000 section 3.1: "Reset Recvd").
func (m *streamMap) onResetAcked(f sentFrame) {
	if s := m.m[f.id]; s != nil && s.send != nil {
		s.send.resetAcked = true
		m.maybeRemove(s)
	}
}

// onMaxStreamsLost queues MAX_STREAMS again for the direction of the lost
// frame f: the frame sent then carries the current limit.
func (m *streamMap) onMaxStreamsLost(f sentFrame) {
	m.maxPending[f.kind-fkMaxStreamsBidi] = true
}

// onStreamsBlockedLost queues STREAMS_BLOCKED again for the direction of
// the lost frame f if the peer's limit is still the one it reported.
func (m *streamMap) onStreamsBlockedLost(f sentFrame) {
	d := f.kind - fkStreamsBlockedBidi
	if m.peerMax[d] == f.n {
		m.blockedPending[d] = true
	}
}

// onMaxDataLost queues MAX_DATA again, with the current limit.
func (f *connFlow) onMaxDataLost() { f.limitPending = true }

// onDataBlockedLost queues DATA_BLOCKED again if the connection is still
// blocked at limit, the one the lost frame reported.
func (f *connFlow) onDataBlockedLost(limit uint64) {
	if f.sendMax == limit && f.sendCredit() == 0 {
		f.blockedQueue = true
	}
}

// onNewConnIDLost announces connection ID seq again unless it was retired
// meanwhile.
func (ids *connIDs) onNewConnIDLost(seq uint64) {
	if ids.localBySeq(seq) != nil {
		ids.announce = append(ids.announce, seq)
	}
}

// onProbe prepares the content of probe packets (RFC 9002 section 6.2.4):
// in a handshake space all unacknowledged CRYPTO data, in the application
// space the content of the oldest packets in flight.
func (c *Conn) onProbe(p recovery.Probe) {
	sp := c.spaces[p.Space]
	if sp.discarded {
		return
	}
	if p.Space != spaceApp {
		// Packets of both handshake spaces go out with the probe (see
		// permit): either may hold what the peer misses.
		for _, s := range []recovery.Space{spaceInitial, spaceHandshake} {
			if !c.spaces[s].discarded {
				c.spaces[s].cryptoSend.requeueUnacked()
			}
		}
		return
	}
	c.stats.ProbesSent += uint64(p.Count)
	if c.hasAppData() || c.probeWithRepairs(p.Count) {
		return
	}
	c.requeueOldest(sp, p.Count)
}

// requeueOldest queues again the content of the n oldest ack-eliciting
// packets in flight of space sp, for probes to carry. Their DATAGRAM
// frames are left alone: they are never sent again (RFC 9221 section
// 5.2), and their packets are not lost yet.
func (c *Conn) requeueOldest(sp *pnSpace, n int) {
	left := n
	sp.sent.each(func(_ uint64, frames []sentFrame) bool {
		if !hasEliciting(frames) {
			return true
		}
		for _, f := range frames {
			if f.kind != fkDatagram {
				c.onFrameLost(sp, f)
			}
		}
		left--
		return left > 0
	})
}
