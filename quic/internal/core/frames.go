package core

import (
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// processFrames handles the frames of a decrypted payload and reports
// whether the packet was ack-eliciting.
func (c *Conn) processFrames(s recovery.Space, pt wire.PacketType, payload []byte, dcid wire.ConnectionID) (bool, error) {
	if len(payload) == 0 {
		// RFC 9000 section 12.4: a packet must hold a frame.
		return false, transportError(wire.CodeProtocolViolation, 0, "packet without frames")
	}
	eliciting := false
	first := true
	for len(payload) > 0 {
		f, n, err := c.parser.Parse(payload)
		if err != nil {
			return eliciting, err
		}
		ft := f.Type()
		if err := wire.CheckFrameAllowed(ft, pt); err != nil {
			return eliciting, err
		}
		eliciting = eliciting || ft.IsAckEliciting()
		if c.debugf != nil {
			c.debugf("%v recv %v frame %v", c.now, s, ft)
		}
		c.qlogFrame(f)
		if ft.IsFEC() {
			err = c.onFECFrame(f, first)
		} else {
			err = c.handleFrame(s, f, dcid)
		}
		if err != nil {
			return eliciting, err
		}
		first = false
		if c.state != stateActive {
			return eliciting, nil
		}
		payload = payload[n:]
	}
	return eliciting, nil
}

// handleFrame dispatches one frame (RFC 9000 section 19).
func (c *Conn) handleFrame(s recovery.Space, f wire.Frame, dcid wire.ConnectionID) error {
	switch f := f.(type) {
	case *wire.PaddingFrame, *wire.PingFrame, *wire.DataBlockedFrame, *wire.PathResponseFrame:
		// Nothing to do beyond acknowledging the packet. An unexpected
		// PATH_RESPONSE may be ignored (RFC 9000 section 19.18).
	case *wire.AckFrame:
		return c.onAckFrame(s, f)
	case *wire.CryptoFrame:
		return c.onCryptoFrame(s, f)
	case *wire.StreamFrame:
		return c.streams.onStreamFrame(c.now, f)
	case *wire.ResetStreamFrame:
		return c.streams.onResetStream(c.now, f)
	case *wire.StopSendingFrame:
		return c.streams.onStopSending(c.now, f)
	case *wire.MaxDataFrame:
		if c.flow.onMaxData(f.Maximum) {
			c.flow.blockedQueue = false
		}
	case *wire.MaxStreamDataFrame:
		return c.streams.onMaxStreamData(c.now, f)
	case *wire.MaxStreamsFrame:
		c.streams.onMaxStreams(f)
	case *wire.StreamDataBlockedFrame:
		return c.streams.onStreamDataBlocked(c.now, f)
	case *wire.StreamsBlockedFrame:
		c.streams.onStreamsBlocked(f)
	case *wire.NewConnectionIDFrame:
		return c.cids.onNewConnectionID(c, f)
	case *wire.RetireConnectionIDFrame:
		return c.cids.onRetireConnectionID(c, f.SequenceNumber, dcid)
	case *wire.PathChallengeFrame:
		if len(c.pathResponses) < 4 {
			c.pathResponses = append(c.pathResponses, f.Data)
		}
	case *wire.NewTokenFrame:
		return c.onNewToken(f)
	case *wire.ConnectionCloseFrame:
		c.onPeerClose(f)
	case *wire.HandshakeDoneFrame:
		return c.onHandshakeDoneFrame()
	case *wire.DatagramFrame:
		// RFC 9221 section 3: DATAGRAM frames without the transport
		// parameter, which this endpoint does not send.
		return transportError(wire.CodeProtocolViolation, f.Type(), "DATAGRAM frame not negotiated")
	default:
		return transportError(wire.CodeFrameEncodingError, f.Type(), "unexpected frame type")
	}
	return nil
}

// onCryptoFrame buffers handshake data and hands what is in order to TLS
// (RFC 9000 section 19.6).
func (c *Conn) onCryptoFrame(s recovery.Space, f *wire.CryptoFrame) error {
	sp := c.spaces[s]
	end := f.Offset + uint64(len(f.Data))
	if end > sp.cryptoRecv.readOff+uint64(c.cfg.MaxCryptoBuffer) {
		// Section 7.5: too much data beyond what TLS consumed.
		return transportError(wire.CodeCryptoBufferExceeded, wire.FrameTypeCrypto, "CRYPTO data up to %d, %d read", end, sp.cryptoRecv.readOff)
	}
	sp.cryptoRecv.push(f.Offset, f.Data)
	c.onCryptoData(s)
	return nil
}

// onAckFrame feeds an ACK frame to loss recovery (RFC 9002 appendix A.7)
// and acts on what it acknowledged and declared lost.
func (c *Conn) onAckFrame(s recovery.Space, f *wire.AckFrame) error {
	exp := uint8(wire.DefaultAckDelayExponent)
	if c.hasPeer {
		exp = uint8(c.peerParams.AckDelayExponent)
	}
	ack := recovery.Ack{Ranges: f.Ranges, Delay: wire.DecodeAckDelay(f.AckDelay, exp), ECNCheck: &c.ecn}
	if f.HasECN {
		ack.ECN = &f.ECN
	}
	res, err := c.sender.OnAck(c.now, s, &ack)
	if err != nil {
		return transportError(wire.CodeProtocolViolation, f.Type(), "%v", err)
	}
	sp := c.spaces[s]
	if l := f.Ranges[0].Largest; sp.largestAcked == wire.InvalidPacketNumber || l > sp.largestAcked {
		sp.largestAcked = l
	}
	c.onRecoveryResult(res)
	return nil
}

// onRecoveryResult acts on what loss recovery reports: acknowledged frames
// are done, lost ones are queued again (RFC 9000 section 13.3), probes
// are owed. The Result is copied first because handling it may call the
// Sender again.
func (c *Conn) onRecoveryResult(res *recovery.Result) {
	if c.fec != nil && c.fec.send != nil {
		c.fec.send.onResult(res)
	}
	acked := append(c.build.acked[:0], res.Acked...)
	acked = append(acked, res.Recovered...)
	lost := append(c.build.lost[:0], res.Lost...)
	probe := res.Probe
	c.stats.PacketsLost += uint64(len(res.Lost))
	c.build.acked, c.build.lost = acked, lost
	confirm := false
	for _, p := range acked {
		if c.onPacketAcked(p) {
			confirm = true
		}
	}
	for _, p := range lost {
		c.onPacketLost(p)
	}
	if probe.Count > 0 {
		c.onProbe(probe)
	}
	c.qlogMetricsUpdated(c.now)
	if confirm && c.isClient && c.handshakeComplete {
		// RFC 9001 section 4.1.2: the acknowledgement of a 1-RTT packet
		// confirms the handshake for the client.
		c.confirmHandshake()
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
	if p.Space == spaceApp && c.isOneRTT(p.Number) {
		c.ku.onAcked(p.Number)
		return true
	}
	return false
}

// onPacketLost queues again what a lost packet carried.
func (c *Conn) onPacketLost(p recovery.PacketInfo) {
	sp := c.spaces[p.Space]
	if sp.discarded {
		return
	}
	if rec := sp.sent.at(p.Number); rec != nil && rec.live {
		c.ecn.onLost(c.now, rec)
	}
	frames := sp.sent.take(p.Number)
	if c.debugf != nil {
		c.debugf("%v lost %v pn %d frames %v", c.now, p.Space, p.Number, frames)
	}
	c.qlogPacketLost(c.now, p)
	if carriesData(frames) {
		c.stats.PacketsRetransmitted++
	}
	for _, f := range frames {
		c.onFrameLost(sp, f)
	}
	sp.sent.compact()
}

// onFrameAcked completes a frame the peer received.
func (c *Conn) onFrameAcked(sp *pnSpace, f sentFrame) {
	switch f.kind {
	case fkAck:
		sp.acks.onAckAcked(f.id)
	case fkCrypto:
		sp.cryptoSend.onAck(f.off, f.n)
	case fkStream:
		c.streams.onStreamAcked(f)
	case fkNewToken:
		c.onNewTokenAcked()
	case fkFECRecovered:
		c.fec.recv.onReportAcked(f.id)
	case fkResetStream:
		if s := c.streams.m[f.id]; s != nil && s.send != nil {
			s.send.resetAcked = true
			c.streams.maybeRemove(s)
		}
	}
}

// onFrameLost queues a lost frame's content again, with fresh values where
// they changed (RFC 9000 section 13.3).
func (c *Conn) onFrameLost(sp *pnSpace, f sentFrame) {
	m := &c.streams
	switch f.kind {
	case fkCrypto:
		sp.cryptoSend.onLost(f.off, f.n)
	case fkStream:
		m.onStreamLost(f)
	case fkHandshakeDone:
		c.handshakeDonePend = true
	case fkNewToken:
		c.onNewTokenLost()
	case fkMaxData:
		c.flow.limitPending = true
	case fkDataBlocked:
		if c.flow.sendMax == f.n && c.flow.sendCredit() == 0 {
			c.flow.blockedQueue = true
		}
	case fkMaxStreamsBidi, fkMaxStreamsUni:
		m.maxPending[f.kind-fkMaxStreamsBidi] = true
	case fkStreamsBlockedBidi, fkStreamsBlockedUni:
		d := f.kind - fkStreamsBlockedBidi
		if m.peerMax[d] == f.n {
			m.blockedPending[d] = true
		}
	case fkNewConnID:
		if c.cids.localBySeq(f.id) != nil {
			c.cids.announce = append(c.cids.announce, f.id)
		}
	case fkRetireConnID:
		c.cids.queueRetire(f.id)
	case fkMaxStreamData, fkStopSending, fkResetStream, fkStreamDataBlocked:
		m.onControlLost(f)
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
	if c.hasAppData() {
		return
	}
	left := p.Count
	sp.sent.each(func(_ uint64, frames []sentFrame) bool {
		if !hasEliciting(frames) {
			return true
		}
		for _, f := range frames {
			c.onFrameLost(sp, f)
		}
		left--
		return left > 0
	})
}
