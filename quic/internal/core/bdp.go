package core

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Careful Resume with the BDP frame (RFC 9959; the frame in the spirit of
// draft-kuhn-quic-0rtt-bdp-11, see wire's frame_bdp.go). Both endpoints
// offer wire.ParamBDP when Config.CarefulResume is set.
//
//   - The server, once its handshake is confirmed and the client offered
//     the parameter, seals the path state loss recovery says is worth
//     saving (Sender.SavablePathState) with the client's address, the
//     wall-clock time and a lifetime (crypto.PathStateSealer), and sends
//     it in a BDP frame: when the state first becomes available, then
//     when it changed notably (see updateDue).
//   - The client keeps the latest blob with its session ticket (resume.go;
//     the ticket is stored again when a new blob arrives) and returns it,
//     unread, on its next connection to that server: in its first 0-RTT
//     packet, or its first 1-RTT packet without 0-RTT.
//   - The server opens a returned blob: one that is authentic, of this
//     format, unexpired and issued to this client's address starts Careful
//     Resume (Sender.StartCarefulResume); any other is ignored, the
//     connection starts as usual, and the reason is counted.
//
// Phase changes of Careful Resume are counted and logged (resume_qlog.go)
// whichever endpoint sends.

// Defaults of CarefulResumeConfig.
const (
	// DefaultResumeLifetime bounds how long a saved state may be used: a
	// path's capacity is not expected to hold for much longer, and
	// Careful Resume retreats safely when it did not hold at all.
	DefaultResumeLifetime = time.Hour
	// DefaultResumeUpdateRTTs is the smallest spacing, in smoothed RTTs,
	// of the BDP frames a server sends while a transfer goes on.
	DefaultResumeUpdateRTTs = 4
)

// resumeNotableShare is the relative change of the saved congestion window
// or RTT (one part in this many) that makes a new BDP frame worth
// sending while a transfer goes on.
const resumeNotableShare = 4

// CarefulResumeConfig enables Careful Resume with the BDP frame
// (Config.CarefulResume).
type CarefulResumeConfig struct {
	// Sealer seals and opens the saved path states. A server needs one;
	// servers of a farm share its key so that a client may resume with
	// any of them. A client does not use it.
	Sealer *crypto.PathStateSealer
	// Epoch is the wall-clock time of time 0 on the driver's timeline:
	// saved states carry their issue time on the wall clock, so that they
	// outlive the process, while the core never reads a clock. A
	// simulated run passes a fixed time and stays deterministic.
	Epoch time.Time
	// Lifetime is how long a state a server saves may be used (default
	// DefaultResumeLifetime, at most crypto.MaxPathStateLifetime).
	Lifetime time.Duration
	// UpdateRTTs is the smallest spacing, in smoothed RTTs, of a
	// server's BDP frames while a transfer goes on (default
	// DefaultResumeUpdateRTTs).
	UpdateRTTs int
}

// withDefaults returns a copy of r with its defaults, or an error naming
// an invalid field; nil stays nil.
func (r *CarefulResumeConfig) withDefaults() (*CarefulResumeConfig, error) {
	if r == nil {
		return nil, nil
	}
	d := *r
	setDefault(&d.Lifetime, DefaultResumeLifetime)
	setDefault(&d.UpdateRTTs, DefaultResumeUpdateRTTs)
	switch {
	case d.Lifetime < time.Millisecond || d.Lifetime > crypto.MaxPathStateLifetime:
		return nil, fmt.Errorf("%w: CarefulResume.Lifetime %v out of [1ms, %v]", ErrConfig, d.Lifetime, crypto.MaxPathStateLifetime)
	case d.UpdateRTTs < 1:
		return nil, fmt.Errorf("%w: CarefulResume.UpdateRTTs %d below 1", ErrConfig, d.UpdateRTTs)
	}
	return &d, nil
}

// BDPRejections counts the BDP frames a server ignored, by reason.
type BDPRejections struct {
	// Invalid: forged, altered, malformed or sealed with another key.
	Invalid uint64
	// Version: a format this server does not read.
	Version uint64
	// Expired: past its lifetime, or issued too far in the future.
	Expired uint64
	// Address: issued to another client address.
	Address uint64
	// Unused: valid, but loss recovery did not take it (Careful Resume
	// already started, or the connection is past its start).
	Unused uint64
	// Disabled: this server has Careful Resume off.
	Disabled uint64
}

// Total is the sum of the counters.
func (r BDPRejections) Total() uint64 {
	return r.Invalid + r.Version + r.Expired + r.Address + r.Unused + r.Disabled
}

// CarefulResumeStats are a connection's Careful Resume state and counters.
type CarefulResumeStats struct {
	// Negotiated: both endpoints offered the BDP parameter.
	Negotiated bool
	// Phase is the Careful Resume phase of this endpoint's sending (0
	// when not in use), PhaseChanges how many times it changed.
	Phase        recovery.ResumePhase
	PhaseChanges uint64
	// WindowSufficed counts a Careful Resume that ended in
	// Reconnaissance because the window normal congestion control
	// allowed had already reached the jump once the path was confirmed
	// (RFC 9959 section 3.2): the saved state had nothing to add.
	WindowSufficed uint64
	// Resumed is the saved state this connection resumed from (a server
	// that accepted a BDP frame), zero otherwise.
	Resumed recovery.ResumeState
	// BDPFramesSent counts BDP frames sent: a server's saved states, or
	// the one a client returned (retransmissions not counted).
	// BDPFramesReceived counts those received; a server counts the ones
	// it accepted (BDPFramesAccepted) and those it ignored (Rejected).
	BDPFramesSent, BDPFramesReceived, BDPFramesAccepted uint64
	Rejected                                            BDPRejections
}

// bdpState is a connection's part of Careful Resume with the BDP frame:
// the blob to send, a server's record of what it sent, a client's latest
// blob and ticket, and the phase last seen. With Config.CarefulResume nil
// it only tracks the phase.
type bdpState struct {
	cfg    *CarefulResumeConfig // nil: the extension is off
	parser wire.BDPFrameParser
	// offered: this endpoint offered the extension; peerOffered: the
	// peer's transport parameters offer it.
	offered, peerOffered bool

	// blob is the frame to send: a server's latest sealed state, or the
	// one a client returns; seq numbers a server's blobs, so that only
	// the loss of the latest sends it again.
	blob    []byte
	seq     uint64
	pending bool
	// fresh: the pending frame was not sent yet (not a retransmission).
	fresh bool
	// spare is the buffer the next blob is sealed in.
	spare []byte

	// A server's last state sent and when; resumed: a returned state
	// started Careful Resume.
	last    recovery.ResumeState
	lastAt  time.Duration
	sent    bool
	resumed bool
	// opened: the server opened the first state the client returned.
	opened bool
	// busy: stream data waited to be sent at the last update check.
	busy bool

	// A client's latest blob from the server, or the one of the ticket it
	// resumed, stored with its latest ticket (resume.go).
	saved  []byte
	ticket *tls.SessionState

	phase recovery.ResumePhase
	stats CarefulResumeStats
}

// addParam offers the extension in the transport parameters p of a
// client, when it has a session cache to keep states in, or of a server.
func (b *bdpState) addParam(p *wire.TransportParameters, isClient bool, tlsConf *tls.Config) {
	if b.cfg == nil || (isClient && tlsConf.ClientSessionCache == nil) {
		return
	}
	b.offered = true
	if p.Extensions == nil {
		p.Extensions = make(map[uint64][]byte)
	}
	p.Extensions[wire.ParamBDP] = []byte{}
}

// onPeerParams notes whether the peer's parameters p offer the extension;
// a malformed offer is a TRANSPORT_PARAMETER_ERROR.
func (b *bdpState) onPeerParams(p *wire.TransportParameters) error {
	v, ok := p.Extensions[wire.ParamBDP]
	if !ok {
		return nil
	}
	if err := wire.CheckBDPParam(v); err != nil {
		return err
	}
	b.peerOffered = b.cfg != nil
	b.stats.Negotiated = b.peerOffered && b.offered
	return nil
}

// hasFrame reports whether a BDP frame waits to go in a packet of the
// application space; early: the packet is a 0-RTT one.
func (b *bdpState) hasFrame(early bool) bool {
	// In 0-RTT packets, a client's blob from a ticket goes before the
	// server's parameters arrive: a ticket holds a blob only from a
	// server that offered the extension.
	return b.pending && (early || b.peerOffered)
}

// appendFrame appends the pending BDP frame to w if it fits.
func (b *bdpState) appendFrame(w *packetWriter) {
	if !b.hasFrame(w.current().early) {
		return
	}
	f := wire.BDPFrame{Blob: b.blob}
	if !w.appendFrame(f.Len(), f.Append) {
		return
	}
	b.pending = false
	if b.fresh {
		b.fresh = false
		b.stats.BDPFramesSent++
	}
	w.record(sentFrame{kind: fkBDP, id: b.seq})
}

// onLost sends the blob of a lost frame f again, if it is still the one
// to send.
func (b *bdpState) onLost(f sentFrame) {
	if f.id == b.seq && len(b.blob) > 0 {
		b.pending = true
	}
}

// onBDPFrame handles a BDP frame received at now: a client keeps the
// blob, a server resumes from it.
func (c *Conn) onBDPFrame(now time.Duration, f *wire.BDPFrame) {
	b := &c.bdp
	b.stats.BDPFramesReceived++
	if !c.isClient {
		c.resumeFrom(now, f.Blob)
		return
	}
	// A client parses the frame only if it offered the extension
	// (Conn.parseExtension). A server repeating the same state costs no
	// new store of the session.
	if bytes.Equal(b.saved, f.Blob) {
		return
	}
	b.saved = append(b.saved[:0], f.Blob...)
	c.storeSessionAgain()
}

// resumeFrom opens a blob a client returned, received at now, and starts
// Careful Resume from it if it holds; otherwise the connection goes on as
// usual and the reason is counted.
func (c *Conn) resumeFrom(now time.Duration, blob []byte) {
	b := &c.bdp
	if b.cfg == nil || b.cfg.Sealer == nil {
		b.stats.Rejected.Disabled++
		return
	}
	if b.opened {
		// Only the first state a client returns is opened (it sends one
		// per connection): one that sends more costs the server no
		// further decryption.
		b.stats.Rejected.Unused++
		return
	}
	b.opened = true
	st, err := b.cfg.Sealer.Open(blob, c.remote.Addr(), b.cfg.Epoch.Add(now))
	if err != nil {
		b.stats.Rejected.count(err)
		return
	}
	saved := recovery.ResumeState{SavedCwnd: int64(min(st.Cwnd, 1<<62)), SavedRTT: st.RTT}
	if !c.sender.StartCarefulResume(now, saved) {
		b.stats.Rejected.Unused++
		return
	}
	b.resumed = true
	b.stats.BDPFramesAccepted++
	b.stats.Resumed = saved
	c.notePhase(now)
}

// count counts a rejection by the error crypto's Open gave.
func (r *BDPRejections) count(err error) {
	switch {
	case errors.Is(err, crypto.ErrPathStateVersion):
		r.Version++
	case errors.Is(err, crypto.ErrPathStateExpired):
		r.Expired++
	case errors.Is(err, crypto.ErrPathStateAddress):
		r.Address++
	default:
		r.Invalid++
	}
}

// maySendPathState queues at now a BDP frame with the path state loss
// recovery offers to save, when a server may send one and an update is
// due.
func (c *Conn) maySendPathState(now time.Duration) {
	b := &c.bdp
	if c.isClient || !b.peerOffered || b.cfg.Sealer == nil || b.pending || !c.handshakeConfirmed || c.state != stateActive {
		return
	}
	st, ok := c.sender.SavablePathState()
	if !ok || st.SavedCwnd <= 0 {
		return
	}
	srtt := c.sender.RTT().SmoothedRTT()
	if !b.updateDue(now, st, srtt, c.transferIdle()) {
		return
	}
	ps := crypto.PathState{
		IssuedAt: b.cfg.Epoch.Add(now), Lifetime: b.cfg.Lifetime,
		Cwnd: uint64(st.SavedCwnd), RTT: st.SavedRTT, Addr: c.remote.Addr(),
	}
	// Sealed aside, so that a failure leaves the blob in flight whole.
	blob, err := b.cfg.Sealer.Seal(b.spare[:0], ps, c.cfg.Rand)
	if err != nil {
		return // an RTT below a microsecond, or no entropy: nothing to save
	}
	b.blob, b.spare = blob, b.blob
	b.seq, b.pending, b.fresh = b.seq+1, true, true
	b.last, b.lastAt, b.sent = st, now, true
}

// updateDue is the rule of a server's BDP frames at now, for the state st
// loss recovery offers, with smoothed RTT srtt and idle: no stream data
// waits to be sent. The first goes as soon as a state is offered. While
// data is sent, another goes when UpdateRTTs smoothed RTTs passed since
// the last one and its window or RTT changed by a quarter or more. When
// the sending stops (the end of a transfer), one goes at once if the
// state changed at all, so that it travels with the last data and a
// client that closes as soon as it has them keeps the state of the whole
// transfer; while sending stays stopped, the last acknowledgements may
// still change the state, and one more goes a smoothed RTT after the
// last if they did.
func (b *bdpState) updateDue(now time.Duration, st recovery.ResumeState, srtt time.Duration, idle bool) bool {
	ended := idle && b.busy
	b.busy = !idle
	switch {
	case !b.sent:
		return true
	case st == b.last:
		return false
	case ended:
		return true
	}
	since := now - b.lastAt
	if idle {
		return since >= srtt
	}
	return since >= time.Duration(b.cfg.UpdateRTTs)*srtt && notablyChanged(b.last, st)
}

// notablyChanged reports whether the window or RTT of st differs from
// old's by a quarter of old's or more.
func notablyChanged(old, st recovery.ResumeState) bool {
	return absDiff(int64(old.SavedRTT), int64(st.SavedRTT))*resumeNotableShare >= int64(old.SavedRTT) ||
		absDiff(old.SavedCwnd, st.SavedCwnd)*resumeNotableShare >= old.SavedCwnd
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// transferIdle reports whether the sending has stopped, or is about to:
// no stream data waits to be sent now, or what waits is the end of every
// stream that has any (the application closed them) and fits in the
// room the congestion window leaves. The BDP frame queued then goes
// ahead of that last data, in the same flight, so that a client that
// closes as soon as its response is whole still receives it; queued
// after the last data, it would arrive behind it, at a closed
// connection.
func (c *Conn) transferIdle() bool {
	credit := c.flow.sendCredit()
	if !c.streams.hasSendable(credit) {
		return true
	}
	left, final := c.streams.finalBytes(credit)
	room := int64(c.sender.CongestionWindow()) - c.sender.BytesInFlight()
	return final && int64(left) <= room
}

// finalBytes is the new stream data waiting to be sent within credit,
// and whether it is all the last data of closed streams, none waiting
// for retransmission.
func (m *streamMap) finalBytes(credit uint64) (left uint64, final bool) {
	for i := range m.sendQueue.len() {
		s := *m.sendQueue.at(i)
		sd := s.send
		if sd == nil || sd.reset || m.m[s.id] != s || !m.sendable(s, credit) {
			continue
		}
		if !sd.finQueue || sd.buf.hasLost() {
			return 0, false
		}
		left += sd.buf.written - sd.buf.next
	}
	return left, true
}

// notePhase counts and logs at now a change of Careful Resume's phase.
func (c *Conn) notePhase(now time.Duration) {
	p := c.sender.ResumePhase()
	b := &c.bdp
	if p == b.phase {
		return
	}
	sufficed := p == recovery.ResumeNormal && b.phase == recovery.ResumeReconnaissance && c.sender.ResumeWindowSufficed()
	c.qlog.carefulResumePhaseUpdated(now, b.phase, p, b.stats.Resumed, c.sender.CongestionWindow(), sufficed)
	b.phase = p
	b.stats.PhaseChanges++
	if sufficed {
		b.stats.WindowSufficed++
	}
}

// report returns the counters with the current phase.
func (b *bdpState) report() CarefulResumeStats {
	s := b.stats
	s.Phase = b.phase
	return s
}
