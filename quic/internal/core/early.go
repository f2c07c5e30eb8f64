package core

import (
	"crypto/tls"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// earlyState is a connection's 0-RTT state (RFC 9001 section 4.6, RFC 9000
// section 7.4.1).
type earlyState struct {
	// write seals a client's 0-RTT packets, until the 1-RTT keys come.
	write *crypto.Keys
	// params are the server's transport parameters remembered with the
	// session ticket: the limits 0-RTT data stays within.
	params     wire.TransportParameters
	haveParams bool
	// attempted: the client sent 0-RTT packets or could have; accepted
	// and rejected tell the outcome, known by the handshake's end.
	attempted, accepted, rejected bool
	// discardAt is when a server drops its 0-RTT keys, three PTOs after
	// the first 1-RTT packet (RFC 9001 section 4.9.3).
	discardAt    time.Duration
	discardArmed bool
	// oneRTTFrom is the number of the first 1-RTT packet sent: the
	// application space's packets below it were 0-RTT.
	oneRTTFrom uint64
	oneRTTSent bool
}

// noteOneRTTSent records the first 1-RTT packet number.
func (c *Conn) noteOneRTTSent(pn uint64) {
	if !c.early.oneRTTSent {
		c.early.oneRTTFrom, c.early.oneRTTSent = pn, true
	}
}

// isOneRTT reports whether application packet pn was a 1-RTT packet: only
// the acknowledgement of one confirms the handshake at a client (RFC 9001
// section 4.1.2), and only those count for key updates.
func (c *Conn) isOneRTT(pn uint64) bool {
	return c.early.oneRTTSent && pn >= c.early.oneRTTFrom
}

// sending0RTT reports whether the application space sends 0-RTT packets
// now: a client with 0-RTT keys and not yet 1-RTT keys.
func (c *Conn) sending0RTT() bool {
	return c.isClient && c.appWrite == nil && c.early.write != nil
}

// EarlyDataAccepted reports whether the server accepted this connection's
// 0-RTT data (client) or whether 0-RTT packets were accepted (server).
func (c *Conn) EarlyDataAccepted() bool { return c.early.accepted }

// installEarlySecret installs the 0-RTT keys: a client's for sealing, a
// server's for opening (RFC 9001 section 5.1).
func (c *Conn) installEarlySecret(ev tls.QUICEvent, write bool) {
	k, err := crypto.New(ev.Suite, ev.Data, crypto.Version(c.version))
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "installing 0-RTT keys: %v", err))
		return
	}
	if !write {
		c.earlyRead = k
		c.early.accepted = true
		return
	}
	if !c.isClient || !c.early.haveParams || c.appWrite != nil {
		return
	}
	c.early.write = k
	c.early.attempted = true
	// The remembered limits hold until the server's new parameters
	// arrive (RFC 9000 section 7.4.1).
	p := &c.early.params
	c.flow.sendMax = p.InitialMaxData
	c.streams.onPeerParams(p)
}

// onAppWriteKeys runs when the 1-RTT write keys are installed: a client
// sends no more 0-RTT packets (RFC 9001 section 4.9.3).
func (c *Conn) onAppWriteKeys() {
	if c.isClient {
		c.early.write = nil
	}
}

// onEarlyDataRejected handles the server's refusal of 0-RTT at a client:
// the 0-RTT packets are forgotten by loss recovery and their content
// queued again for 1-RTT packets (RFC 9002 section 6.4, RFC 9000 section
// 7.4.1: the streams go on under the server's new limits).
func (c *Conn) onEarlyDataRejected() {
	if !c.isClient {
		return
	}
	c.early.write = nil
	c.early.rejected = true
	c.early.accepted = false
	sp := c.spaces[spaceApp]
	res, err := c.sender.DiscardPackets(c.now, spaceApp, sp.nextPN)
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "discarding 0-RTT packets: %v", err))
		return
	}
	discarded := append(c.build.lost[:0], res.Discarded...)
	c.build.lost = discarded
	for _, p := range discarded {
		for _, f := range sp.sent.take(p.Number) {
			c.onFrameLost(sp, f)
		}
	}
	sp.sent.compact()
	if c.hasPeer {
		c.refreshStreamLimits(false)
	}
	c.events.push(Event{Kind: EventEarlyDataRejected})
}

// onEarlyPeerParams runs when the server's transport parameters arrive at
// a client that used remembered ones: the streams opened meanwhile move to
// the new limits.
func (c *Conn) onEarlyPeerParams() {
	if c.isClient && c.early.attempted {
		c.refreshStreamLimits(!c.early.rejected)
	}
}

// refreshStreamLimits applies the peer's initial stream limits to the
// streams opened before they arrived: raised only while the 0-RTT data
// may have been accepted (the server cannot have lowered them), replaced
// once it was rejected.
func (c *Conn) refreshStreamLimits(raiseOnly bool) {
	m := &c.streams
	for id, s := range m.m {
		if s.send == nil || !m.isLocal(id) {
			continue
		}
		limit := m.peerInitUni
		if streamIsBidi(id) {
			limit = m.peerInitBidiRemote
		}
		if raiseOnly && limit <= s.send.maxData {
			continue
		}
		s.send.maxData = limit
		m.queueSend(s)
	}
}

// onEarlyHandshakeDone settles 0-RTT when a client's handshake completes:
// 0-RTT that was not rejected was accepted, and then the server's new
// limits must not be below the remembered ones (RFC 9000 section 7.4.1).
func (c *Conn) onEarlyHandshakeDone() error {
	if !c.isClient || !c.early.attempted || c.early.rejected {
		return nil
	}
	c.early.accepted = true
	if name, ok := reducedLimit(&c.early.params, &c.peerParams); ok {
		return transportError(wire.CodeProtocolViolation, 0, "server accepted 0-RTT and reduced %s", name)
	}
	return nil
}

// reducedLimit reports the first limit 0-RTT relies on (RFC 9000 section
// 7.4.1, RFC 9221 section 3) that now is below what was remembered.
func reducedLimit(old, cur *wire.TransportParameters) (string, bool) {
	checks := []struct {
		name     string
		old, cur uint64
	}{
		{"active_connection_id_limit", old.ActiveConnectionIDLimit, cur.ActiveConnectionIDLimit},
		{"initial_max_data", old.InitialMaxData, cur.InitialMaxData},
		{"initial_max_stream_data_bidi_local", old.InitialMaxStreamDataBidiLocal, cur.InitialMaxStreamDataBidiLocal},
		{"initial_max_stream_data_bidi_remote", old.InitialMaxStreamDataBidiRemote, cur.InitialMaxStreamDataBidiRemote},
		{"initial_max_stream_data_uni", old.InitialMaxStreamDataUni, cur.InitialMaxStreamDataUni},
		{"initial_max_streams_bidi", old.InitialMaxStreamsBidi, cur.InitialMaxStreamsBidi},
		{"initial_max_streams_uni", old.InitialMaxStreamsUni, cur.InitialMaxStreamsUni},
		{"max_datagram_frame_size", old.MaxDatagramFrameSize, cur.MaxDatagramFrameSize},
	}
	for _, ch := range checks {
		if ch.cur < ch.old {
			return ch.name, true
		}
	}
	return "", false
}

// handle0RTT processes a 0-RTT packet at a server (RFC 9001 section 4.6):
// held until the ClientHello yields its keys, dropped when 0-RTT was
// declined or its keys are gone.
func (c *Conn) handle0RTT(now time.Duration, pkt []byte, h *wire.LongHeader, pnOffset int) bool {
	if c.isClient || !c.acceptLongIDs(h) {
		return false
	}
	switch c.keysFor(wire.PacketType0RTT) {
	case keysPending:
		return c.hold(now, pkt, wire.PacketType0RTT)
	case keysGone:
		return false
	}
	sp := c.spaces[spaceApp]
	pnLen, truncated, err := c.earlyRead.Header().Remove(pkt, pnOffset)
	if err != nil {
		return false
	}
	pn, err := wire.DecodePacketNumber(sp.acks.largestReceived(), truncated, pnLen)
	if err != nil {
		return false
	}
	payload, err := c.earlyRead.Packet().Open(pkt, pnOffset+pnLen, pn)
	if err != nil {
		c.onDecryptFailure(err)
		return false
	}
	return c.onOpened(now, spaceApp, wire.PacketType0RTT, pn, pkt[0], payload, h.DstConnID)
}

// onOneRTTReceived arms the discard of a server's 0-RTT keys at its first
// 1-RTT packet: reordered 0-RTT packets are still read for three PTOs
// (RFC 9001 section 4.9.3).
func (c *Conn) onOneRTTReceived() {
	if c.isClient || c.earlyRead == nil || c.early.discardArmed {
		return
	}
	c.early.discardAt, c.early.discardArmed = c.now+3*c.pto(), true
}

// earlyTimer is the discard time of the 0-RTT keys.
func (c *Conn) earlyTimer() (time.Duration, bool) {
	return c.early.discardAt, c.early.discardArmed && c.earlyRead != nil
}

// onEarlyTimer discards the server's 0-RTT keys when their time is up.
func (c *Conn) onEarlyTimer(now time.Duration) {
	if t, ok := c.earlyTimer(); ok && now >= t {
		c.earlyRead = nil
		c.early.discardArmed = false
	}
}
