package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// minInitialDatagram is the smallest datagram that may carry an Initial
// packet (RFC 9000 section 14.1).
const minInitialDatagram = 1200

// lengthFieldLen is the size of the Length field of the long headers this
// endpoint sends: two bytes hold any packet up to 16383 bytes.
const lengthFieldLen = 2

// zeros supplies PADDING frames.
var zeros [minInitialDatagram]byte

// builder is the scratch space of the packet builder, reused from datagram
// to datagram so that steady-state sending does not allocate.
type builder struct {
	payload [numSpaces][]byte
	frames  [numSpaces][]sentFrame
	plan    [numSpaces]plannedPacket
	ack     wire.AckFrame
	data    []byte
	// fecRanges holds the packet ranges of a FEC_RECOVERED frame.
	fecRanges []wire.AckRange
	acked     []recovery.PacketInfo
	lost      []recovery.PacketInfo
}

// plannedPacket is a packet of the datagram being built, before it is
// sealed.
type plannedPacket struct {
	space        recovery.Space
	pn           uint64
	pnLen        int
	hdrLen       int // header length, packet number included
	ackEliciting bool
	hasAck       bool
	padded       bool
	early        bool // a 0-RTT packet
	fecSource    bool // a FEC source symbol (fec_send.go)
}

func (p *plannedPacket) size(payload int) int { return p.hdrLen + payload + crypto.TagLen }

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
	c.now = now
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
	size := c.datagramBudget()
	if size < minInitialDatagram {
		c.updateAmplification()
		return nil, false
	}
	c.maybeStartKeyUpdate(now)
	if c.pmtuProbeDue(now) {
		return c.probeDatagram(now, buf)
	}
	size = c.pmtu.budget(size, c.sender)
	permit := c.permit(now)
	n, total, eliciting := c.planDatagram(now, size, &permit)
	if !eliciting && permit.eliciting && c.handshakeComplete {
		// Nothing to send while the window allowed it (RFC 9002
		// section 7.8). A server holding data until its handshake
		// completes is not application limited.
		c.sender.SetAppLimited()
	}
	if n == 0 {
		return nil, false
	}
	out := c.sealDatagram(now, n, total, buf, size)
	if out == nil {
		return nil, false
	}
	return out, true
}

// datagramBudget is the largest datagram that may be sent now: the path's
// maximum, and before address validation three times what was received
// (RFC 9000 section 8.1).
func (c *Conn) datagramBudget() int {
	if len(c.cids.peer) == 0 {
		return 0 // a server before the client's first Initial
	}
	return c.amp.limit(c.maxDatagram)
}

// updateAmplification tells the loss detector whether the anti-amplification
// limit blocks the server, so that it arms no PTO meanwhile (RFC 9002
// section 6.2.2.1).
func (c *Conn) updateAmplification() {
	if c.amp.validated {
		return
	}
	limited := c.datagramBudget() < minInitialDatagram
	if c.amp.setLimited(limited) {
		c.sender.SetAmplificationLimited(c.now, limited)
	}
}

// permit asks congestion control and the pacer whether ack-eliciting
// packets may go now; probes bypass both (RFC 9002 section 7.5).
func (c *Conn) permit(now time.Duration) sendPermit {
	var p sendPermit
	p.eliciting = c.sender.CanSend() && c.sender.NextSendTime(now, c.maxDatagram) <= now
	for s := range recovery.Space(numSpaces) {
		p.probe[s] = c.sender.ProbesPending(s) > 0
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
		p.eliciting = p.eliciting && c.sender.SendWindow() > 0
	}
	return p
}

// planDatagram builds the payloads of the packets of one datagram, in
// the order Initial, Handshake, 1-RTT (RFC 9000 section 12.2). It returns
// how many packets, their total size and whether any is ack-eliciting.
func (c *Conn) planDatagram(now time.Duration, size int, permit *sendPermit) (n, total int, eliciting bool) {
	remaining := size
	for s := range recovery.Space(numSpaces) {
		if !c.canSendIn(s) {
			continue
		}
		p, ok := c.planPacket(now, s, remaining, permit)
		if !ok {
			continue
		}
		c.build.plan[n] = p
		n++
		sz := p.size(len(c.build.payload[s]))
		remaining -= sz
		total += sz
		eliciting = eliciting || p.ackEliciting
	}
	if n == 0 {
		return 0, 0, false
	}
	total += c.padDatagram(n, total)
	return n, total, eliciting
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

// planPacket fills the payload of the next packet of space s within
// remaining bytes of datagram.
func (c *Conn) planPacket(now time.Duration, s recovery.Space, remaining int, permit *sendPermit) (plannedPacket, bool) {
	sp := c.spaces[s]
	p := plannedPacket{space: s, pn: sp.nextPN, early: s == spaceApp && c.early.sending()}
	p.pnLen, _ = wire.PacketNumberLen(p.pn, sp.largestAcked)
	p.hdrLen = c.headerLen(s, p.pnLen)
	avail := remaining - p.hdrLen - crypto.TagLen
	if avail < 8 {
		return p, false
	}
	b := c.build.payload[s][:0]
	frames := c.build.frames[s][:0]
	allow := permit.allows(s)
	wantsData := allow && c.hasDataIn(s)
	fecOn := c.fec.sending(s, p.early)
	if fecOn && permit.eliciting {
		// Owed repairs go before new data (fec_send.go).
		wantAck := sp.acks.due(now) || sp.acks.piggyback()
		if rb, rf, hasAck, ok := c.appendRepair(now, sp, b, frames, avail, wantAck); ok {
			c.build.payload[s], c.build.frames[s] = rb, rf
			p.hasAck, p.ackEliciting = hasAck, true
			return p, true
		}
	}
	if fecOn {
		avail = fecAvail(avail)
	}
	if !p.early && (sp.acks.due(now) || (wantsData && sp.acks.piggyback()) || c.fec.reportDue(s)) {
		b, frames, p.hasAck = c.appendAck(sp, b, frames, avail, now)
	}
	if c.fec != nil && s == spaceApp && !p.early {
		b, frames = c.appendRecoveredReport(b, frames, avail, p.hasAck)
	}
	if allow {
		b, frames = c.appendEliciting(s, b, frames, avail)
		if c.sender.ProbesPending(s) > 0 && !hasEliciting(frames) && len(b) < avail {
			// A probe with nothing else to say (RFC 9002 section 6.2.4).
			b = append(b, byte(wire.FrameTypePing))
			frames = append(frames, sentFrame{kind: fkPing})
		}
	}
	if fecOn && hasStreamFrame(frames) {
		b, frames = c.markSource(b, frames)
		p.fecSource = frames[len(frames)-1].kind == fkFECSourceID
	}
	c.build.payload[s], c.build.frames[s] = b, frames
	if len(b) == 0 {
		return p, false
	}
	p.ackEliciting = hasEliciting(frames)
	return p, true
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
// again: not only ACK and FEC frames (a lost repair is not repeated) or a
// path MTU probe.
func carriesData(frames []sentFrame) bool {
	for i := range frames {
		switch frames[i].kind {
		case fkAck, fkFECRecovered, fkFECRepair, fkFECSourceID, fkPathProbe:
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

// headerLen is the size of the header of a packet of space s, packet
// number included.
func (c *Conn) headerLen(s recovery.Space, pnLen int) int {
	dcid := c.cids.dcid().Len()
	if s == spaceApp && !c.early.sending() {
		return 1 + dcid + pnLen
	}
	n := 1 + 4 + 1 + dcid + 1 + c.cids.local[0].id.Len() + lengthFieldLen + pnLen
	if s == spaceInitial {
		n += c.retry.tokenLen()
	}
	return n
}

// appendAck appends the space's ACK frame, trimmed to fit (RFC 9000
// section 13.2.3 lets old ranges go).
func (c *Conn) appendAck(sp *pnSpace, b []byte, frames []sentFrame, avail int, now time.Duration) ([]byte, []sentFrame, bool) {
	f := &c.build.ack
	if !sp.acks.buildFrame(f, now, c.cfg.AckDelayExponent, c.cfg.MaxAckRanges) {
		return b, frames, false
	}
	c.ecn.fillAck(sp.id, f)
	if !f.TruncateToLen(avail - len(b)) {
		return b, frames, false
	}
	out, err := f.Append(b)
	if err != nil {
		return b, frames, false
	}
	return out, append(frames, sentFrame{kind: fkAck, id: f.Ranges[0].Largest}), true
}

// hasDataIn reports whether space s has ack-eliciting frames to send.
func (c *Conn) hasDataIn(s recovery.Space) bool {
	if c.spaces[s].cryptoSend.hasPending(wire.MaxVarint) {
		return true
	}
	return s == spaceApp && c.hasAppData()
}

// appendEliciting appends the ack-eliciting frames of space s.
func (c *Conn) appendEliciting(s recovery.Space, b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame) {
	if s == spaceApp {
		b, frames = c.appendControl(b, frames, avail)
	}
	b, frames = c.appendCrypto(c.spaces[s], b, frames, avail)
	if s == spaceApp && c.maySendStreams() {
		// A server may send stream data before its handshake
		// completes, within a budget that keeps the handshake safe
		// (halfrtt.go).
		b, frames = c.appendStreams(b, frames, avail)
	}
	return b, frames
}

// appendCrypto appends CRYPTO frames: lost data first, then new data.
func (c *Conn) appendCrypto(sp *pnSpace, b []byte, frames []sentFrame, avail int) ([]byte, []sentFrame) {
	buf := &sp.cryptoSend
	for buf.hasPending(wire.MaxVarint) {
		off := buf.next
		if buf.hasLost() {
			off = buf.lost.min()
		}
		n, ok := wire.MaxCryptoDataLen(avail-len(b), off)
		if !ok || n == 0 {
			break
		}
		rg, _ := buf.nextRange(uint64(n), wire.MaxVarint)
		data := c.streamBytes(buf, rg)
		f := wire.CryptoFrame{Offset: rg.lo, Data: data}
		out, err := f.Append(b)
		if err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "CRYPTO frame: %v", err))
			break
		}
		b = out
		frames = append(frames, sentFrame{kind: fkCrypto, off: rg.lo, n: rg.len()})
	}
	return b, frames
}

// streamBytes returns the bytes of rg for a frame: a view of the send
// buffer when they lie in one block, or else a copy in scratch space. The
// frame's Append copies them into the packet at once.
func (c *Conn) streamBytes(buf *sendBuffer, rg span) []byte {
	if data, ok := buf.view(rg.lo, rg.len()); ok {
		return data
	}
	data := c.scratch(int(rg.len()))
	buf.readAt(data, rg.lo)
	return data
}

// scratch returns a reusable buffer of n bytes.
func (c *Conn) scratch(n int) []byte {
	if cap(c.build.data) < n {
		c.build.data = make([]byte, n)
	}
	return c.build.data[:n]
}

// padDatagram adds PADDING to the last packet where RFC 9000 section 14.1
// requires a 1200-byte datagram (a client's Initial, a server's
// ack-eliciting Initial), and where a packet is too short for the header
// protection sample (RFC 9001 section 5.4.2). It returns the bytes added.
func (c *Conn) padDatagram(n, total int) int {
	added := 0
	for i := range n {
		p := &c.build.plan[i]
		pl := &c.build.payload[p.space]
		if short := 4 - p.pnLen - len(*pl); short > 0 {
			*pl = append(*pl, zeros[:short]...)
			added += short
			p.padded = true
		}
	}
	needs := false
	for i := range n {
		p := &c.build.plan[i]
		if p.space == spaceInitial && (c.isClient || p.ackEliciting) {
			needs = true
		}
	}
	if needs && total+added < minInitialDatagram {
		last := &c.build.plan[n-1]
		pad := minInitialDatagram - total - added
		pl := &c.build.payload[last.space]
		*pl = append(*pl, zeros[:pad]...)
		last.padded = true
		added += pad
	}
	return added
}
