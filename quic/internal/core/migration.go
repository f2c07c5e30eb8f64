package core

// A client's active migration (RFC 9000 section 9.2): it probes a path
// from a new local address with PATH_CHALLENGE, in packets with a
// connection ID the server gave and has not seen used (section 9.5), and
// moves there once a PATH_RESPONSE comes back, retiring the connection ID
// of the old path. The core knows no sockets: the driver sends the probe
// datagrams (NextProbeDatagram) from the new address, and every datagram
// after EventPathMigrated too. The server then sees the client's
// non-probing packets from the new address, moves its path and validates
// it in turn (path.go).

import (
	"errors"
	"net/netip"
	"slices"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

var (
	// ErrMigrationDisabled: the peer sent disable_active_migration (RFC
	// 9000 section 18.2), so this endpoint must not move.
	ErrMigrationDisabled = errors.New("quic: the peer disabled active migration")
	// ErrNoSpareConnID: the peer gave no connection ID besides the one
	// in use, and a new path needs its own (RFC 9000 section 9.5).
	ErrNoSpareConnID = errors.New("quic: the peer gave no spare connection ID for a new path")
	// ErrProbeFailed: the new path did not answer its PATH_CHALLENGE in
	// time (RFC 9000 section 8.2.4).
	ErrProbeFailed = errors.New("quic: the new path did not answer")
	// ErrProbeUnderway: a probe of a new path is not over yet.
	ErrProbeUnderway = errors.New("quic: a path probe is underway")
	// ErrNotClient: only a client moves to a new address (RFC 9000
	// section 9).
	ErrNotClient = errors.New("quic: only a client migrates")
)

// localProbe is a client's probe of a path from a new local address.
type localProbe struct {
	active bool
	// dcid is the peer's connection ID the probes carry.
	dcid wire.ConnectionID
	// addr, when set, is a server's preferred address (preferred.go):
	// the probes go there from the current local address, through
	// NextDatagram; otherwise they go to the server's address from a
	// new local one, through NextProbeDatagram.
	addr       netip.AddrPort
	challenges [][8]byte
	due        bool
	retryAt    time.Duration
	deadline   time.Duration
}

// answers reports whether a PATH_RESPONSE with data answers the probe.
func (lp *localProbe) answers(data [8]byte) bool {
	return lp.active && slices.Contains(lp.challenges, data)
}

// timer is when the probe next needs attention.
func (lp *localProbe) timer() (time.Duration, bool) {
	if !lp.active {
		return 0, false
	}
	if !lp.due && len(lp.challenges) > 0 {
		return min(lp.retryAt, lp.deadline), true
	}
	return lp.deadline, true
}

// ProbePath starts probing a path from a new local address at now: the
// driver then sends NextProbeDatagram's datagrams from that address, and
// learns the outcome from EventPathMigrated or EventPathProbeFailed. Only
// a client with a confirmed handshake (RFC 9000 section 9) whose peer
// allows migration and gave a spare connection ID may probe.
func (c *Conn) ProbePath(now time.Duration) error {
	switch {
	case !c.isClient:
		return ErrNotClient
	case c.state != stateActive:
		return ErrClosed
	case !c.handshakeConfirmed:
		return ErrHandshakeIncomplete
	case c.peerParams.DisableActiveMigration:
		return ErrMigrationDisabled
	case c.path.probe.active:
		return ErrProbeUnderway
	case len(c.cids.peer) < 2:
		return ErrNoSpareConnID
	}
	c.path.probe = localProbe{active: true, dcid: c.cids.spare(), due: true, deadline: now + c.validationTimeout()}
	c.qlog.pathUpdated(now, "probing_started", c.remote, c.remote)
	return nil
}

// NextProbeDatagram builds the next datagram of a probe started by
// ProbePath, appending it to buf[:0], and reports false when none is due
// at now. The driver sends it to its Addr from the new local address.
func (c *Conn) NextProbeDatagram(now time.Duration, buf []byte) (Datagram, bool) {
	lp := &c.path.probe
	if !lp.active || lp.addr.IsValid() || !lp.due || c.state != stateActive || c.appWrite == nil {
		return Datagram{}, false
	}
	w := &c.scratch().writer
	w.reset(buf, c.maxDatagram)
	sp := c.spaces[spaceApp]
	pk := plannedPacket{space: spaceApp, pn: sp.nextPN}
	pk.pnLen, _ = wire.PacketNumberLen(pk.pn, sp.largestAcked)
	if !w.startShortPacket(pk, c.appWrite, lp.dcid) {
		return Datagram{}, false
	}
	if err := c.appendProbeChallenge(w); err != nil {
		c.failProbe(now, err)
		return Datagram{}, false
	}
	pkt := w.finishPacket()
	if pkt == nil {
		return Datagram{}, false
	}
	w.padTo(pathDatagramSize)
	// Sent from another local address: not counted against the limits
	// of the current path.
	c.path.out = c.remote
	out := c.sealDatagram(now, w)
	c.path.out = netip.AddrPort{}
	if out == nil {
		return Datagram{}, false
	}
	if err := c.sender.MarkPathProbe(spaceApp, pkt.pn); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "path probe: %v", err))
		return Datagram{}, false
	}
	lp.retryAt = now + max(probeTimeout(c.sender.RTT()), c.cfg.Recovery.InitialRTT)
	return Datagram{Addr: c.remote, Data: out, ECN: c.ecn.last}, true
}

// appendProbeChallenge appends a new PATH_CHALLENGE of the probe and
// remembers its data.
func (c *Conn) appendProbeChallenge(w *packetWriter) error {
	lp := &c.path.probe
	data, ok, err := c.writeChallenge(w)
	if !ok {
		return err
	}
	lp.challenges = rememberChallenge(lp.challenges, data)
	lp.due = false
	c.path.stats.ChallengesSent++
	return nil
}

// preferredDue reports whether a challenge to a server's preferred
// address is to go.
func (lp *localProbe) preferredDue() bool { return lp.active && lp.due && lp.addr.IsValid() }

// onProbeAnswered moves the connection to the probed path: its packets
// carry the probe's connection ID from now on and the old one is retired
// (RFC 9000 section 9.5), and congestion control and the RTT estimator
// start again, on a path nothing is known about (section 9.4).
func (c *Conn) onProbeAnswered(now time.Duration) error {
	lp := &c.path.probe
	if !c.cids.switchTo(lp.dcid) {
		c.failProbe(now, ErrNoSpareConnID)
		return nil
	}
	if lp.addr.IsValid() {
		// The server's preferred address: the local socket stays.
		old := c.remote
		c.remote = lp.addr
		*lp = localProbe{}
		c.leftServerAddress(now, old)
		c.path.stats.PeerAddressChanges++
		c.path.stats.CongestionResets++
		c.events.push(Event{Kind: EventPeerAddressChanged})
		c.qlog.pathUpdated(now, "migration_complete", old, c.remote)
		return c.sender.ResetPath(now)
	}
	*lp = localProbe{}
	c.path.stats.Migrations++
	c.path.stats.CongestionResets++
	c.events.push(Event{Kind: EventPathMigrated})
	c.qlog.pathUpdated(now, "migration_complete", c.remote, c.remote)
	return c.sender.ResetPath(now)
}

// onProbeTimer sends the probe's challenge again a probe timeout after
// the last, and gives the probe up at its deadline.
func (c *Conn) onProbeTimer(now time.Duration) {
	lp := &c.path.probe
	if !lp.active {
		return
	}
	if now >= lp.deadline {
		c.failProbe(now, ErrProbeFailed)
		return
	}
	if len(lp.challenges) > 0 && now >= lp.retryAt {
		lp.due = true
	}
}

// failProbe ends a probe without moving.
func (c *Conn) failProbe(now time.Duration, err error) {
	c.path.probe = localProbe{}
	c.path.stats.ProbesFailed++
	c.events.push(Event{Kind: EventPathProbeFailed, Err: err})
	c.qlog.pathUpdated(now, "probing_abandoned", c.remote, c.remote)
}

// CancelProbe ends a probe started by ProbePath without moving and
// without an event: the driver gave it up.
func (c *Conn) CancelProbe() {
	c.path.probe = localProbe{}
}
