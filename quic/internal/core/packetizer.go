package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// minInitialDatagram is the smallest datagram that may carry an Initial
// packet (RFC 9000 section 14.1).
const minInitialDatagram = 1200

// builder is the connection's scratch space, reused so that steady-state
// sending does not allocate: the datagram writer, and the lists of
// packets loss recovery reports.
type builder struct {
	writer packetWriter
	// fecRanges holds the packet ranges of a FEC_RECOVERED frame.
	fecRanges []wire.AckRange
	acked     []recovery.PacketInfo
	lost      []recovery.PacketInfo
}

// sendPermit is what congestion control, the pacer and the probes allow
// for the datagram being built.
type sendPermit struct {
	eliciting bool // ack-eliciting packets may be sent
	probe     [numSpaces]bool
}

func (p *sendPermit) allows(s recovery.Space) bool { return p.eliciting || p.probe[s] }

// buildDatagram builds the next datagram to send at now, appending it to
// buf[:0] (buf may be nil), and reports false when there is nothing to send
// now. NextDatagram (drive.go) hands it to the driver.
func (c *Conn) buildDatagram(now time.Duration, buf []byte) ([]byte, bool) {
	switch c.state {
	case stateClosing:
		return c.closingDatagram(now, buf)
	case stateDraining, stateClosed:
		return nil, false
	}
	if c.hsDiscardPending {
		defer c.discardHandshakeAfterAck(now)
	}
	c.pmtuUpdate(now)
	if c.state == stateClosing {
		return c.closingDatagram(now, buf)
	}
	if c.path.pending() {
		if out, ok := c.pathDatagram(now, buf); ok {
			return out, true
		}
	}
	size := c.datagramBudget()
	if size < minInitialDatagram {
		c.updateAmplification(now)
		return nil, false
	}
	c.maybeStartKeyUpdate(now)
	if c.pmtuProbeDue(now) {
		return c.probeDatagram(now, buf)
	}
	w := &c.scratch().writer
	w.reset(buf, c.pmtu.budget(size, c.sender))
	permit := sendPermitAt(c.sender, now, c.maxDatagram)
	exempt := c.grantExempt(&permit)
	eliciting := c.writePackets(now, w, &permit)
	c.endExempt()
	if !eliciting && permit.eliciting && !exempt && c.handshakeComplete {
		// Nothing to send while the window allowed it (RFC 9002
		// section 7.8). A server holding data until its handshake
		// completes is not application limited.
		c.sender.SetAppLimited()
	}
	out := c.sealDatagram(now, w)
	return out, out != nil
}

// datagramBudget is the largest datagram that may be sent now: the path's
// maximum, and before address validation three times what was received
// (RFC 9000 section 8.1), as on a new path before it is validated
// (section 9.3.1).
func (c *Conn) datagramBudget() int {
	if len(c.cids.peer) == 0 {
		return 0 // a server before the client's first Initial
	}
	return c.amp.limit(c.path.sendLimit(c.maxDatagram))
}

// updateAmplification tells the loss detector at now whether the
// anti-amplification limit blocks the server, so that it arms no PTO
// meanwhile (RFC 9002 section 6.2.2.1).
func (c *Conn) updateAmplification(now time.Duration) {
	if c.amp.validated {
		return
	}
	limited := c.datagramBudget() < minInitialDatagram
	if c.amp.setLimited(limited) {
		c.sender.SetAmplificationLimited(now, limited)
	}
}

// sendPermitAt asks congestion control and the pacer whether ack-eliciting
// packets may go at now; probes bypass both (RFC 9002 section 7.5).
func sendPermitAt(snd *recovery.Sender, now time.Duration, maxDatagram int) sendPermit {
	var p sendPermit
	p.eliciting = snd.CanSend() && snd.NextSendTime(now, maxDatagram) <= now
	for s := range recovery.Space(numSpaces) {
		p.probe[s] = snd.ProbesPending(s) > 0
	}
	if p.probe[spaceInitial] || p.probe[spaceHandshake] {
		// A handshake probe carries the handshake data of both spaces:
		// data of the other one may be what the peer misses, and no
		// acknowledgement will open the window before the handshake
		// completes.
		p.probe[spaceInitial], p.probe[spaceHandshake] = true, true
	}
	if p.probe[spaceApp] || p.probe[spaceHandshake] || p.probe[spaceInitial] {
		// CanSend is true whenever a probe is owed; only the probed
		// spaces may exceed the window.
		p.eliciting = p.eliciting && snd.SendWindow() > 0
	}
	return p
}

// writePackets writes a packet for each space with something to send,
// in the order Initial, Handshake, 1-RTT (RFC 9000 section 12.2), and pads
// the datagram. It reports whether any packet is ack-eliciting.
func (c *Conn) writePackets(now time.Duration, w *packetWriter, permit *sendPermit) bool {
	eliciting := false
	for s := range recovery.Space(numSpaces) {
		if !c.canSendIn(s) || !c.startPacket(w, s) {
			continue
		}
		c.appendFrames(now, w, s, permit)
		if p := w.finishPacket(); p != nil {
			eliciting = eliciting || p.ackEliciting
		}
	}
	if !w.empty() {
		w.padDatagram(c.isClient)
	}
	return eliciting
}

// canSendIn reports whether packets of space s can be sealed now.
func (c *Conn) canSendIn(s recovery.Space) bool {
	sp := c.spaces[s]
	if sp.discarded {
		return false
	}
	if s == spaceApp {
		return c.appWrite != nil || c.early.sending()
	}
	return sp.write != nil
}

// startPacket starts the next packet of space s in w, unless the budget
// leaves too little room for frames after its header: a 1-RTT packet has
// a short header, the others (0-RTT included) a long one with the
// connection's version and IDs, and an Initial the token of a Retry. The
// packet's keys are the space's, the 1-RTT ones (which update, so the
// Conn holds them) or a client's 0-RTT ones (RFC 9001 section 5).
func (c *Conn) startPacket(w *packetWriter, s recovery.Space) bool {
	sp := c.spaces[s]
	p := plannedPacket{space: s, pn: sp.nextPN, early: s == spaceApp && c.early.sending()}
	var keys packetProtector = sp.write
	switch {
	case p.early:
		keys = c.early.write
	case s == spaceApp:
		keys = c.appWrite
	}
	p.pnLen, _ = wire.PacketNumberLen(p.pn, sp.largestAcked)
	var ok bool
	if p.long() {
		h := wire.LongHeader{Type: packetTypeOfSpace(s), Version: c.version, DstConnID: c.cids.dcid(), SrcConnID: c.cids.local[0].id}
		switch {
		case p.early:
			h.Type = wire.PacketType0RTT
		case s == spaceInitial:
			h.Token = c.retry.token // a server's is empty
		}
		ok = w.startLongPacket(p, keys, &h)
	} else {
		ok = w.startShortPacket(p, keys, c.cids.dcid())
	}
	if ok && w.room() < minFrameRoom {
		w.abandonPacket()
		return false
	}
	return ok
}

// appendFrames fills the packet of space s: an owed FEC repair, or else
// an ACK frame when one is due (or can ride along with data), a
// FEC_RECOVERED report, the ack-eliciting frames the permit allows, and
// FEC_SOURCE_ID in a protected packet with stream data.
func (c *Conn) appendFrames(now time.Duration, w *packetWriter, s recovery.Space, permit *sendPermit) {
	sp := c.spaces[s]
	p := w.current()
	allow := permit.allows(s)
	wantsData := allow && c.hasDataIn(s)
	fecOn := c.fec.protects(s, p.early)
	if probe := c.fec.probeRepairDue(s, permit); fecOn && (permit.eliciting || probe) {
		// Owed repairs go before new data (fec_send.go), and so do
		// repairs of sources known lost and a probe timeout's repairs
		// (fec_lossrepair.go).
		wantAck := sp.acks.due(now) || sp.acks.piggyback()
		if c.appendRepair(now, w, sp, wantAck, probe) {
			return
		}
	}
	if fecOn {
		w.reserve(fecReserve)
	}
	if !p.early && (sp.acks.due(now) || (wantsData && sp.acks.piggyback()) || c.fec.reportDue(s) || c.probeCarriesAck(s, permit)) {
		c.appendAck(now, w, sp)
	}
	if c.fec != nil && s == spaceApp && !p.early {
		c.fec.recv.appendReport(w, p.hasAck)
	}
	if allow {
		c.appendEliciting(now, w, s)
		if c.sender.ProbesPending(s) > 0 && !p.ackEliciting && w.room() > 0 {
			// A probe with nothing else to say (RFC 9002 section 6.2.4).
			w.appendPing(fkPing)
		}
		if s == spaceApp {
			c.appendImmediateAck(w)
		}
	}
	if fecOn && hasFECSourceData(w.currentFrames()) {
		seq := c.fec.send.nextSeq()
		id := wire.FECSourceIDFrame{Seq: seq}
		w.markSource(seq, c.fec.send.sourcePadding(w.payloadLen(), id.Len()))
	}
}

// probeCarriesAck reports whether a probe of handshake space s carries an
// ACK frame: whenever the peer may not know what arrived, since the ACK
// frames sent before may be what was lost, and a handshake stalls when
// neither end learns that its flight arrived (RFC 9002 section 6.2.4 lets
// a probe carry any frame; RFC 9000 section 13.3 has lost ACK information
// sent again).
func (c *Conn) probeCarriesAck(s recovery.Space, permit *sendPermit) bool {
	return s != spaceApp && permit.probe[s] && c.spaces[s].acks.unconfirmed()
}

// hasEliciting reports whether a frame list makes its packet ack-eliciting.
func hasEliciting(frames []sentFrame) bool {
	for i := range frames {
		if k := frames[i].kind; k != fkAck && k != fkFECRecovered {
			return true
		}
	}
	return false
}

// carriesData reports whether a lost packet had content that is sent
// again: not only ACK and FEC frames (a lost repair is not repeated), a
// path MTU probe, DATAGRAM frames (RFC 9221 section 5.2), PING and
// IMMEDIATE_ACK (nothing to repeat: a probe timeout's PING, a keep-alive)
// or path validation frames (a new challenge follows a lost one, RFC 9000
// section 8.2.1). A PING in flight must not count as data: after a probe
// timeout whose PINGs an outage took, the next probe timeout would send
// PINGs again instead of repairs (fec_lossrepair_send.go).
func carriesData(frames []sentFrame) bool {
	for i := range frames {
		switch frames[i].kind {
		case fkAck, fkFECRecovered, fkFECRepair, fkFECSourceID, fkPathProbe, fkDatagram,
			fkPing, fkImmediateAck, fkPathChallenge, fkPathResponse:
		default:
			return true
		}
	}
	return false
}

// hasStreamFrame reports whether a frame list holds a STREAM frame.
func hasStreamFrame(frames []sentFrame) bool {
	for i := range frames {
		if frames[i].kind == fkStream {
			return true
		}
	}
	return false
}

// appendAck appends the space's ACK frame, trimmed to fit (RFC 9000
// section 13.2.3 lets old ranges go).
func (c *Conn) appendAck(now time.Duration, w *packetWriter, sp *pnSpace) {
	f := &w.ack
	if !sp.acks.buildFrame(f, now, c.cfg.AckDelayExponent, c.cfg.MaxAckRanges) {
		return
	}
	c.ecn.fillAck(sp.id, f)
	if !f.TruncateToLen(w.room()) || !w.appendFrame(f.Len(), f.Append) {
		return
	}
	w.record(sentFrame{kind: fkAck, id: f.Ranges[0].Largest})
}
