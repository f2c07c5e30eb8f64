package core

// The peer's path: connection migration (RFC 9000 section 9) and path
// validation (section 8.2). A connection has one path at a time, the
// peer's address c.remote. A non-probing packet that is the newest the
// peer sent, from another address, moves the path there (section 9.3):
// the peer rebound behind a NAT or migrated. The new address is then
// validated with PATH_CHALLENGE, and until it answers, what is sent there
// is held to three times what came from it (section 9.3.1). A validation
// that fails takes the path back to the last validated address (section
// 9.3.2). Congestion control and the RTT estimator start again from their
// initial values once a new address is validated, unless only its port
// changed (section 9.4): a NAT that rebinds the port leaves the path
// itself as it was. PATH_RESPONSE goes back on the path its challenge came
// from (section 8.2.2), in a datagram of its own (path_send.go), as do the
// challenges. A client moves its own end with a probe (migration.go).

import (
	"io"
	"net/netip"
	"slices"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

const (
	// maxPathResponses bounds the PATH_RESPONSE frames waiting to go
	// out: a peer probing faster than that loses nothing it needs, it
	// sends more challenges (RFC 9000 section 8.2.2).
	maxPathResponses = 4
	// maxChallenges bounds the challenge values a validation remembers:
	// a response to any of them validates (section 8.2.3).
	maxChallenges = 4
	// pathDatagramSize is the size datagrams with a PATH_CHALLENGE or
	// PATH_RESPONSE are expanded to (RFC 9000 sections 8.2.1 and 8.2.2).
	pathDatagramSize = minInitialDatagram
)

// PathStats counts the connection's path changes and validations.
type PathStats struct {
	// PeerAddressChanges counts the times the path moved to another peer
	// address (RFC 9000 section 9.3); PortChanges those where only the
	// port changed, a NAT rebinding.
	PeerAddressChanges, PortChanges uint64
	// Validations counts the path validations started with
	// PATH_CHALLENGE, ValidationsSucceeded and ValidationsFailed how
	// they ended.
	Validations, ValidationsSucceeded, ValidationsFailed uint64
	// Reverts counts the returns to the last validated address after a
	// validation failed (section 9.3.2).
	Reverts uint64
	// CongestionResets counts the restarts of congestion control and RTT
	// estimation on a new path (section 9.4).
	CongestionResets uint64
	// ChallengesSent and ResponsesSent count the PATH_CHALLENGE and
	// PATH_RESPONSE frames sent.
	ChallengesSent, ResponsesSent uint64
	// Migrations counts this endpoint's own moves to a new local address
	// (a client's Migrate), ProbesFailed the probes of a new path that
	// got no answer.
	Migrations, ProbesFailed uint64
	// SilencePings counts a client's PINGs after a probe timeout without
	// the data it expected (path.go).
	SilencePings uint64
	// UnknownServerAddress counts the datagrams a client dropped because
	// they came from an address that is not the server's (RFC 9000
	// section 9, path_origin.go).
	UnknownServerAddress uint64
}

// pathResponse is a PATH_RESPONSE owed to the address its challenge came
// from, with the bytes the anti-amplification limit lets go there: three
// times the datagram that carried the challenge (RFC 9000 section 8.2.2).
type pathResponse struct {
	data   [8]byte
	addr   netip.AddrPort
	budget int
}

// peerPath is the state of the peer's address: where the datagram being
// processed came from, the last address validated, and a validation
// underway.
type peerPath struct {
	// rxAddr and rxLen describe the datagram being processed;
	// rxNonProbing that the packet being processed has a frame other
	// than PATH_CHALLENGE, PATH_RESPONSE, NEW_CONNECTION_ID and PADDING
	// (RFC 9000 section 9.1).
	rxAddr       netip.AddrPort
	rxLen        int
	rxNonProbing bool

	// lastValid is the last peer address validated: the handshake's,
	// then each one a PATH_RESPONSE proved.
	lastValid netip.AddrPort
	// dcid is the Destination Connection ID of the newest non-probing
	// packet: a peer that changes it with its address migrated on
	// purpose, and is answered with a new connection ID of its own
	// (section 9.5).
	dcid    wire.ConnectionID
	hasDCID bool

	// validating: c.remote is not validated yet; amp holds what goes
	// there to three times what came from it (section 9.3.1); portOnly:
	// it differs from lastValid in its port only.
	validating bool
	portOnly   bool
	amp        amplification
	// challenges are the values sent to c.remote and not answered;
	// challengeDue that a new one is to go; retryAt when one goes again
	// and deadline when the validation is given up (section 8.2.4).
	challenges   [][8]byte
	challengeDue bool
	retryAt      time.Duration
	deadline     time.Duration

	// heardAt is when the peer was last heard from. A client whose
	// last STREAM frame did not end its stream (expectData) and that
	// hears nothing for a probe timeout sends one PING, expanded to
	// 1200 bytes (silencePing): after a NAT rebinding the server's
	// packets are lost at the old port and a downloading client has
	// nothing else to send, so the server would never learn the new
	// one; the size gives the server room under the anti-amplification
	// limit for its challenge and data at once (RFC 9000 section
	// 9.3.1). silencePinged: sent already since the last STREAM frame,
	// so that an idle connection whose streams stay open (HTTP/3's
	// control streams) pings once, not at every probe timeout.
	heardAt       time.Duration
	expectData    bool
	silencePing   bool
	silencePinged bool

	responses []pathResponse
	// out is where the datagram being built goes, when not c.remote.
	out netip.AddrPort

	// probe is a client's probe of a new local address (migration.go)
	// or of the server's preferred address (preferred.go);
	// preferredDone that the latter was considered.
	probe         localProbe
	preferredDone bool
	// preferredUsed: a server's client moved to its preferred address.
	preferredUsed bool
	// ahead is a server's validation of an address its client probes
	// (path_ahead.go).
	ahead aheadValidation
	// formerServer is the server's address a client left for the
	// preferred one, whose datagrams it takes until formerUntil
	// (path_origin.go).
	formerServer netip.AddrPort
	formerUntil  time.Duration

	stats PathStats
}

// onDatagram notes the time, address and size of a datagram from the
// peer, and counts it for the limit of an address under validation.
func (p *peerPath) onDatagram(now time.Duration, from, remote netip.AddrPort, n int) {
	p.rxAddr, p.rxLen = from, n
	p.heardAt = now
	if p.validating && from == remote {
		p.amp.onReceived(n)
	}
}

// onChallenge queues the PATH_RESPONSE to a PATH_CHALLENGE: to the address
// the challenge came from, at once (RFC 9000 section 8.2.2).
func (p *peerPath) onChallenge(data [8]byte) {
	if len(p.responses) >= maxPathResponses {
		return
	}
	p.responses = append(p.responses, pathResponse{data: data, addr: p.rxAddr, budget: 3 * p.rxLen})
}

// validationTimeout is how long a path validation waits for an answer:
// three times the larger of the current probe timeout and one computed
// from the initial RTT (RFC 9000 section 8.2.4), since the new path may be
// slower than the old.
func (c *Conn) validationTimeout() time.Duration {
	initial := c.cfg.Recovery.InitialRTT + max(2*c.cfg.Recovery.InitialRTT, time.Millisecond) + c.sender.RTT().MaxAckDelay()
	return 3 * max(probeTimeout(c.sender.RTT()), initial)
}

// onPeerPacket follows the peer to the address of a 1-RTT packet just
// processed, pn, whose Destination Connection ID was dcid; largest is the
// largest packet number received before it. Only the newest non-probing
// packet moves the path, so that a late or replayed one from an old
// address does not move it back (RFC 9000 section 9.3), and only once the
// handshake is confirmed (section 9). A client never follows the server:
// a server does not migrate (section 9.6 has it announce another address
// instead).
func (c *Conn) onPeerPacket(now time.Duration, pn, largest uint64, dcid wire.ConnectionID) {
	p := &c.path
	if !p.rxNonProbing || (largest != wire.InvalidPacketNumber && pn < largest) {
		return
	}
	changedID := p.hasDCID && dcid != p.dcid
	p.dcid, p.hasDCID = dcid, true
	c.notePreferredUsed(dcid)
	if p.rxAddr == c.remote || c.isClient || !c.handshakeConfirmed || !p.rxAddr.IsValid() {
		return
	}
	if !p.lastValid.IsValid() {
		p.lastValid = c.remote
	}
	if changedID {
		// The peer moved to a new connection ID with its new address:
		// so does this endpoint, if the peer gave it a spare one. A
		// NAT rebinding keeps the peer's ID, and then ours may stay
		// too (RFC 9000 section 9.5).
		c.cids.useSpare()
	}
	c.movePath(now, p.rxAddr)
}

// movePath sends to addr from now on, and validates it unless it is the
// last validated address (RFC 9000 section 9.3.3 lets a path go back to it
// without a new validation).
func (c *Conn) movePath(now time.Duration, addr netip.AddrPort) {
	p := &c.path
	old := c.remote
	c.remote = addr
	p.stats.PeerAddressChanges++
	if addr.Addr() == old.Addr() {
		p.stats.PortChanges++
	}
	c.events.push(Event{Kind: EventPeerAddressChanged})
	c.qlog.pathUpdated(now, "migration_started", old, addr)
	c.probeNewPath(now)
	if addr == p.lastValid {
		p.endValidation()
		c.updateAmplification(now)
		return
	}
	if addr == p.ahead.proven {
		// Proven while the client probed it (path_ahead.go): a new
		// path all the same.
		p.endValidation()
		p.lastValid = addr
		c.updateAmplification(now)
		c.qlog.pathUpdated(now, "migration_complete", old, addr)
		if addr.Addr() != old.Addr() {
			p.stats.CongestionResets++
			if err := c.sender.ResetPath(now); err != nil {
				c.closeLocal(transportError(wire.CodeInternalError, 0, "path reset: %v", err))
			}
		}
		return
	}
	p.validating = true
	p.portOnly = addr.Addr() == p.lastValid.Addr()
	p.amp = amplification{received: uint64(p.rxLen)}
	p.challenges = p.challenges[:0]
	p.challengeDue = true
	p.deadline = now + c.validationTimeout()
	p.stats.Validations++
}

// probeNewPath sends probes at once to the new address, rather than after
// a probe timeout the silence of the old one backed off, with the oldest
// data in flight: what was sent to the old address after the peer left it
// is lost, and the peer's application waits for the first of it (RFC 9002
// section 6.2.4 lets probes carry data sent before).
func (c *Conn) probeNewPath(now time.Duration) {
	res := c.sender.ProbeNow(now)
	n := res.Probe.Count
	c.onRecoveryResult(now, res)
	if n > 0 {
		c.requeueOldest(c.spaces[spaceApp], n)
	}
}

// endValidation stops validating c.remote.
func (p *peerPath) endValidation() {
	p.validating, p.challengeDue = false, false
	p.challenges = p.challenges[:0]
	p.amp = amplification{}
}

// onPathResponse handles a PATH_RESPONSE frame: it validates the path its
// challenge was sent on, whatever path it arrives on (RFC 9000 section
// 8.2.2), or answers a client's probe of a new local address. An
// unexpected one is ignored (section 19.18).
func (c *Conn) onPathResponse(now time.Duration, data [8]byte) error {
	p := &c.path
	if p.probe.answers(data) {
		return c.onProbeAnswered(now)
	}
	if p.ahead.answersAhead(data) {
		p.stats.ValidationsSucceeded++
		return nil
	}
	if !p.validating || !slices.Contains(p.challenges, data) {
		return nil
	}
	p.endValidation()
	p.lastValid = c.remote
	p.stats.ValidationsSucceeded++
	c.qlog.pathUpdated(now, "migration_complete", c.remote, c.remote)
	if !p.portOnly {
		// A new IP address is a new path whose capacity and delay
		// nothing tells (RFC 9000 section 9.4).
		p.stats.CongestionResets++
		return c.sender.ResetPath(now)
	}
	return nil
}

// pathTimer is when the path next needs attention: a challenge to send
// again, or a validation or probe to give up.
func (c *Conn) pathTimer() (time.Duration, bool) {
	var d deadlines
	p := &c.path
	if p.validating {
		d.add(p.deadline, true)
		d.add(p.retryAt, !p.challengeDue && len(p.challenges) > 0)
	}
	d.add(p.probe.timer())
	d.add(c.silenceTimer())
	return d.t, d.ok
}

// onStreamFrame notes whether the latest STREAM frame ended its stream.
func (p *peerPath) onStreamFrame(fin bool) {
	p.expectData, p.silencePinged = !fin, false
}

// silenceTimer is when a client expecting data sends its silence PING.
func (c *Conn) silenceTimer() (time.Duration, bool) {
	p := &c.path
	if !c.isClient || !c.handshakeConfirmed || !p.expectData || p.silencePinged {
		return 0, false
	}
	return p.heardAt + probeTimeout(c.sender.RTT()), true
}

// onPathTimer gives up a validation that got no answer in time, going
// back to the last validated address (RFC 9000 section 9.3.2), or sends
// another challenge, a probe timeout after the last (section 8.2.1 lets
// an endpoint send several against loss, no more often than Initial
// packets).
func (c *Conn) onPathTimer(now time.Duration) {
	p := &c.path
	if t, ok := c.silenceTimer(); ok && now >= t {
		p.silencePing, p.silencePinged = true, true
	}
	c.maybeProbePreferred(now)
	c.onProbeTimer(now)
	if !p.validating {
		return
	}
	if now >= p.deadline {
		failed := c.remote
		p.stats.ValidationsFailed++
		p.stats.Reverts++
		p.endValidation()
		c.remote = p.lastValid
		c.events.push(Event{Kind: EventPeerAddressChanged})
		c.qlog.pathUpdated(now, "migration_abandoned", failed, c.remote)
		c.updateAmplification(now)
		return
	}
	if len(p.challenges) > 0 && now >= p.retryAt {
		p.challengeDue = true
	}
}

// newChallenge draws the unpredictable data of a PATH_CHALLENGE (RFC 9000
// section 8.2.1).
func newChallenge(r io.Reader) ([8]byte, error) {
	var b [8]byte
	_, err := io.ReadFull(r, b[:])
	return b, err
}

// writeChallenge appends a PATH_CHALLENGE with new data to w and returns
// the data; ok is false when the frame did not fit.
func (c *Conn) writeChallenge(w *packetWriter) (data [8]byte, ok bool, err error) {
	data, err = newChallenge(c.cfg.Rand)
	if err != nil {
		return data, false, err
	}
	f := wire.PathChallengeFrame{Data: data}
	if !w.appendFrame(f.Len(), f.Append) {
		return data, false, nil
	}
	w.record(sentFrame{kind: fkPathChallenge})
	return data, true, nil
}

// rememberChallenge adds data to the values a validation waits for an
// answer to, keeping the newest maxChallenges.
func rememberChallenge(list [][8]byte, data [8]byte) [][8]byte {
	if len(list) == maxChallenges {
		list = append(list[:0], list[1:]...)
	}
	return append(list, data)
}

// sendLimit caps a datagram to c.remote to what its validation allows.
func (p *peerPath) sendLimit(size int) int {
	if !p.validating {
		return size
	}
	return p.amp.limit(size)
}

// onSent counts a datagram of n bytes sent to c.remote.
func (p *peerPath) onSent(n int) {
	if p.validating && !p.out.IsValid() {
		p.amp.onSent(n)
	}
}

// PathStats returns the counters of the connection's path changes.
func (c *Conn) pathStats() PathStats { return c.path.stats }
