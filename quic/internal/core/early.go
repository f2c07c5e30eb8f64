package core

import (
	"crypto/tls"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// earlyState is a connection's 0-RTT state (RFC 9001 section 4.6, RFC 9000
// section 7.4.1): its keys, the limits its data stays within, whether the
// server accepted it, and which application packets were 1-RTT.
type earlyState struct {
	// write seals a client's 0-RTT packets, until the 1-RTT keys come.
	write *crypto.Keys
	// read opens the client's 0-RTT packets at a server, until
	// discardAt.
	read *crypto.Keys
	// params are the server's transport parameters remembered with the
	// session ticket: the limits 0-RTT data stays within.
	params     wire.TransportParameters
	haveParams bool
	// attempted: the client sent 0-RTT packets or could have; accepted
	// and rejected tell the outcome, known by the handshake's end. A
	// server's accepted: it has the keys to read them.
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

// onOneRTTSent records the first 1-RTT packet number.
func (e *earlyState) onOneRTTSent(pn uint64) {
	if !e.oneRTTSent {
		e.oneRTTFrom, e.oneRTTSent = pn, true
	}
}

// isOneRTT reports whether application packet pn was a 1-RTT packet: only
// the acknowledgement of one confirms the handshake at a client (RFC 9001
// section 4.1.2), and only those count for key updates.
func (e *earlyState) isOneRTT(pn uint64) bool {
	return e.oneRTTSent && pn >= e.oneRTTFrom
}

// sending reports whether the application space sends 0-RTT packets now:
// a client has 0-RTT keys only until its 1-RTT keys come.
func (e *earlyState) sending() bool { return e.write != nil }

// EarlyDataAccepted reports whether the server accepted this connection's
// 0-RTT data (client) or whether 0-RTT packets were accepted (server).
func (c *Conn) EarlyDataAccepted() bool { return c.early.accepted }

// installKeys installs the 0-RTT keys of a TLS secret: a server's for
// opening, a client's for sealing when it resumed with remembered limits
// and has no 1-RTT keys yet (RFC 9001 section 5.1). It returns those
// limits when the client starts 0-RTT: they hold until the server's new
// parameters arrive (RFC 9000 section 7.4.1).
func (e *earlyState) installKeys(ev tls.QUICEvent, v wire.Version, write, isClient, oneRTTKeys bool) (*wire.TransportParameters, error) {
	k, err := crypto.New(ev.Suite, ev.Data, crypto.Version(v))
	if err != nil {
		return nil, err
	}
	if !write {
		e.read = k
		e.accepted = true
		return nil, nil
	}
	if !isClient || !e.haveParams || oneRTTKeys {
		return nil, nil
	}
	e.write = k
	e.attempted = true
	return &e.params, nil
}

// onOneRTTKeys runs when the 1-RTT write keys are installed: a client
// sends no more 0-RTT packets (RFC 9001 section 4.9.3).
func (e *earlyState) onOneRTTKeys() { e.write = nil }

// reject records the server's refusal of a client's 0-RTT data: no more
// 0-RTT packets, and the data goes again in 1-RTT ones.
func (e *earlyState) reject() {
	e.write = nil
	e.rejected = true
	e.accepted = false
}

// onEarlyDataRejected handles the server's refusal of 0-RTT at a client:
// the 0-RTT packets are forgotten by loss recovery and their content
// queued again for 1-RTT packets (RFC 9002 section 6.4, RFC 9000 section
// 7.4.1: the streams go on under the server's new limits).
func (c *Conn) onEarlyDataRejected(now time.Duration) {
	if !c.isClient {
		return
	}
	c.early.reject()
	sp := c.spaces[spaceApp]
	res, err := c.sender.DiscardPackets(now, spaceApp, sp.nextPN)
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "discarding 0-RTT packets: %v", err))
		return
	}
	discarded := append(c.scratch().lost[:0], res.Discarded...)
	c.scratch().lost = discarded
	for _, p := range discarded {
		for _, f := range sp.sent.take(p.Number) {
			c.onFrameLost(sp, f)
		}
	}
	sp.sent.compact()
	if c.hasPeer {
		c.streams.refreshSendLimits(false)
	}
	c.events.push(Event{Kind: EventEarlyDataRejected})
}

// refreshSendLimits applies the peer's initial stream limits to the local
// streams opened before they arrived, with remembered limits: raised only
// while the 0-RTT data may have been accepted (the server cannot have
// lowered them), replaced once it was rejected.
func (m *streamMap) refreshSendLimits(raiseOnly bool) {
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

// onHandshakeDone settles a client's 0-RTT when its handshake completes:
// 0-RTT that was not rejected was accepted, and then the server's new
// limits must not be below the remembered ones (RFC 9000 section 7.4.1).
func (e *earlyState) onHandshakeDone(peer *wire.TransportParameters) error {
	if !e.attempted || e.rejected {
		return nil
	}
	e.accepted = true
	if name, ok := reducedLimit(&e.params, peer); ok {
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

// onOneRTTReceived arms the discard of a server's 0-RTT keys at its first
// 1-RTT packet, received at now: reordered 0-RTT packets are still read
// for three PTOs (RFC 9001 section 4.9.3).
func (e *earlyState) onOneRTTReceived(now, pto time.Duration) {
	if e.read == nil || e.discardArmed {
		return
	}
	e.discardAt, e.discardArmed = now+3*pto, true
}

// timer is the discard time of a server's 0-RTT keys.
func (e *earlyState) timer() (time.Duration, bool) {
	return e.discardAt, e.discardArmed && e.read != nil
}

// onTimer discards a server's 0-RTT keys when their time is up.
func (e *earlyState) onTimer(now time.Duration) {
	if t, ok := e.timer(); ok && now >= t {
		e.read = nil
		e.discardArmed = false
	}
}
