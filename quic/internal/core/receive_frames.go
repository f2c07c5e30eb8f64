package core

// The receive path, stage 4 of 6: an opened packet's frames. processPacket
// counts the packet (statistics, its ECN codepoint, the idle timer), runs
// the frame loop, which checks each frame is allowed in the packet type
// (RFC 9000 section 12.4) and dispatches it to its handler, gives FEC the
// packet's source symbol and runs the frame loop again over the lost
// packets FEC rebuilt (fec_recv.go), and records the packet for
// acknowledgement (ack.go).
//
// Next, stage 5: the frame handlers, grouped by concern: ACK frames in
// receive_ack.go; stream frames in streams*.go; flow control in flow.go;
// connection IDs in cid.go; NEW_TOKEN in tokens.go; CONNECTION_CLOSE in
// close.go; CRYPTO in space.go and handshake.go, HANDSHAKE_DONE in
// handshake.go; FEC frames in fec_conn.go; the BDP frame in bdp.go;
// DATAGRAM frames in datagram_recv.go. Then stage 6, the packet's
// acknowledgement: ack.go and ackrate.go.

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// processPacket processes the frames of a new authenticated packet and
// records it for acknowledgement.
func (c *Conn) processPacket(now time.Duration, s recovery.Space, pt wire.PacketType, pn uint64, payload []byte, dcid wire.ConnectionID) {
	sp := c.spaces[s]
	c.stats.PacketsReceived++
	ce := c.ecn.onReceived(s)
	c.idle.onReceive(now)
	cryptoBefore := sp.cryptoRecv.received()
	largest := sp.acks.largestReceived()
	c.path.rxNonProbing = false
	eliciting, err := c.processFrames(now, s, pt, payload, dcid, false)
	c.releaseDatagrams(now)
	c.qlog.packetReceived(now, pt, pn, c.rxPacketLen)
	if err == nil && eliciting && s != spaceApp && !sp.discarded && sp.cryptoRecv.received() == cryptoBefore {
		c.speedup.onPeerProbe(&c.spaces, c.isClient)
	}
	rebuilt := false
	if err == nil && c.fec != nil && s == spaceApp && c.state == stateActive {
		recs := c.fec.recv.onPacket(payload)
		rebuilt = len(recs) > 0
		err = c.processRebuilt(now, recs, dcid)
	}
	// An IMMEDIATE_ACK of this packet (or of one FEC rebuilt with it)
	// concerns this packet only, whatever happens next.
	immediate := c.ackFreq.recv.takeImmediate()
	if err != nil {
		c.closeLocal(asTransportError(err))
		return
	}
	if s == spaceApp && c.state == stateActive {
		c.onPeerPacket(now, pn, largest, dcid) // connection migration (path.go)
	}
	if s == spaceHandshake && !c.isClient && !c.amp.validated {
		// RFC 9000 section 8.1: a Handshake packet proves the address;
		// RFC 9001 section 4.9.1: the server drops its Initial keys.
		c.amp.validate()
		c.sender.SetAmplificationLimited(now, false)
		c.dropSpace(now, spaceInitial)
	}
	if sp.discarded {
		return // the packet confirmed the handshake and dropped its space
	}
	sp.acks.onPacket(now, pn, eliciting, c.ackRate.policy(now, s, &c.cfg, c.sender.RTT(), &c.ackFreq.recv))
	if s == spaceApp {
		// RFC 9000 section 13.2.1: a CE-marked packet is acknowledged
		// at once, so that the peer reacts to congestion sooner; under
		// a peer's ACK_FREQUENCY only the first of a run
		// (draft-ietf-quic-ack-frequency section 6.3).
		ce = c.ackFreq.recv.ceAckNow(ce)
	}
	if (ce && eliciting) || immediate || (rebuilt && c.ackFreq.recv.inForce) {
		// IMMEDIATE_ACK asks for an ACK at once (section 5). A packet
		// FEC rebuilt is reported with the next ACK (FEC_RECOVERED):
		// under a peer's thinned ACKs that one goes at once too, so
		// that the peer's FEC and loss detection learn of it in time.
		sp.acks.ackNow()
	}
}

// processFrames handles the frames of a payload of a packet of type pt in
// space s and reports whether the packet was ack-eliciting. A payload FEC
// rebuilt is a packet that never arrived, processed as if it had: its
// ACK frames are skipped, older than what the peer reported since, and so
// are its FEC frames and padding; its frames are not logged, they belong
// to no packet received.
func (c *Conn) processFrames(now time.Duration, s recovery.Space, pt wire.PacketType, payload []byte, dcid wire.ConnectionID, rebuilt bool) (bool, error) {
	if len(payload) == 0 && !rebuilt {
		// RFC 9000 section 12.4: a packet must hold a frame.
		return false, transportError(wire.CodeProtocolViolation, 0, "packet without frames")
	}
	eliciting := false
	first := true
	for len(payload) > 0 {
		f, n, err := c.frameParser().Parse(payload)
		if err != nil {
			return eliciting, err
		}
		payload = payload[n:]
		ft := f.Type()
		if err := wire.CheckFrameAllowed(ft, pt); err != nil {
			return eliciting, err
		}
		if rebuilt && (ft.IsAck() || ft.IsFEC() || ft == wire.FrameTypePadding) {
			continue
		}
		eliciting = eliciting || ft.IsAckEliciting()
		if !rebuilt && !ft.IsProbing() {
			c.path.rxNonProbing = true
		}
		if sf, ok := f.(*wire.StreamFrame); ok {
			c.path.onStreamFrame(sf.Fin) // path.go's silence PING
		}
		if !rebuilt {
			if c.debugf != nil {
				c.debugf("%v recv %v frame %v", now, s, ft)
			}
			c.qlog.frameReceived(f)
		}
		switch {
		case ft.IsFEC():
			err = c.onFECFrame(now, f, first)
		case ft.IsDatagram():
			err = c.onDatagramFrame(f.(*wire.DatagramFrame), rebuilt)
		default:
			err = c.handleFrame(now, s, f, dcid)
		}
		if err != nil {
			return eliciting, err
		}
		// PADDING may precede FEC_SOURCE_ID (fec_pad.go).
		first = first && ft == wire.FrameTypePadding
		if c.state != stateActive {
			return eliciting, nil
		}
	}
	return eliciting, nil
}

// processRebuilt processes the frames of the packets FEC rebuilt
// (fec_recv.go) while the 1-RTT packet being processed was, and recycles
// their buffers.
func (c *Conn) processRebuilt(now time.Duration, rebuilt [][]byte, dcid wire.ConnectionID) error {
	if len(rebuilt) == 0 {
		return nil
	}
	c.qlog.symbolsRecovered(now, len(rebuilt))
	var err error
	for i := 0; i < len(rebuilt) && err == nil && c.state == stateActive; i++ {
		c.onSourceOrder(now, c.fec.recv.pendingSeq[i])
		_, err = c.processFrames(now, spaceApp, wire.PacketType1RTT, rebuilt[i], dcid, true)
		c.releaseDatagrams(now)
	}
	c.fec.recv.recycle()
	return err
}

// handleFrame dispatches one frame (RFC 9000 section 19) of a packet of
// space s received at now.
func (c *Conn) handleFrame(now time.Duration, s recovery.Space, f wire.Frame, dcid wire.ConnectionID) error {
	switch f := f.(type) {
	case *wire.PaddingFrame, *wire.PingFrame, *wire.DataBlockedFrame:
		// Nothing to do beyond acknowledging the packet.
	case *wire.PathResponseFrame:
		return c.onPathResponse(now, f.Data)
	case *wire.AckFrame:
		return c.onAckFrame(now, s, f)
	case *wire.CryptoFrame:
		if err := c.spaces[s].onCryptoFrame(f, c.cfg.MaxCryptoBuffer); err != nil {
			return err
		}
		c.onCryptoData(now, s)
	case *wire.StreamFrame:
		return c.streams.onStreamFrame(now, f)
	case *wire.ResetStreamFrame:
		return c.streams.onResetStream(now, f)
	case *wire.StopSendingFrame:
		return c.streams.onStopSending(now, f)
	case *wire.MaxDataFrame:
		if c.flow.onMaxData(f.Maximum) {
			c.flow.blockedQueue = false
		}
	case *wire.MaxStreamDataFrame:
		return c.streams.onMaxStreamData(now, f)
	case *wire.MaxStreamsFrame:
		c.streams.onMaxStreams(f)
	case *wire.StreamDataBlockedFrame:
		return c.streams.onStreamDataBlocked(now, f)
	case *wire.StreamsBlockedFrame:
		c.streams.onStreamsBlocked(f)
	case *wire.NewConnectionIDFrame:
		return c.cids.onNewConnectionID(f)
	case *wire.RetireConnectionIDFrame:
		return c.cids.onRetireConnectionID(&c.events, f.SequenceNumber, dcid)
	case *wire.PathChallengeFrame:
		c.path.onChallenge(f.Data)
	case *wire.NewTokenFrame:
		return c.onNewToken(f)
	case *wire.ConnectionCloseFrame:
		c.onPeerClose(f)
	case *wire.HandshakeDoneFrame:
		return c.onHandshakeDoneFrame(now)
	case *wire.BDPFrame:
		c.onBDPFrame(now, f)
	case *wire.AckFrequencyFrame, *wire.ImmediateAckFrame:
		return c.onAckFrequencyFrame(f)
	default:
		return transportError(wire.CodeFrameEncodingError, f.Type(), "unexpected frame type")
	}
	return nil
}
