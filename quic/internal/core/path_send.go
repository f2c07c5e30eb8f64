package core

// The datagrams of path validation (RFC 9000 section 8.2): PATH_RESPONSE
// frames go back to the address their challenge came from, and a
// PATH_CHALLENGE to an address under validation, each in a 1-RTT packet of
// a datagram of its own, expanded to 1200 bytes within the
// anti-amplification limit of the address (sections 8.2.1 and 8.2.2). They
// bypass congestion control, as probes do (RFC 9002 section 7.5): they are
// few and small, and the path they test may not be the one the window
// measures. Loss recovery knows them as probes whose loss is no congestion
// signal, and they are never sent again: a lost challenge is followed by a
// new one, a lost response by the peer's next challenge.

import (
	"net/netip"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// pathFrameRoom is the least room a datagram of path validation needs: a
// short header with the longest connection ID and packet number, a
// PATH_CHALLENGE or PATH_RESPONSE frame, and the AEAD tag.
const pathFrameRoom = 1 + wire.MaxConnectionIDLen + 4 + 9 + 16

// pending reports whether a datagram of path validation is due.
func (p *peerPath) pending() bool {
	return len(p.responses) > 0 || (p.validating && p.challengeDue) || p.probe.preferredDue() || p.silencePing
}

// pathTarget picks the address of the next datagram of path validation and
// the bytes that may go there: the first owed response's address, or
// c.remote for a challenge.
func (c *Conn) pathTarget() (netip.AddrPort, int) {
	p := &c.path
	if len(p.responses) == 0 {
		if p.probe.preferredDue() && !(p.validating && p.challengeDue) {
			// The server gave the address: no limit applies.
			return p.probe.addr, c.maxDatagram
		}
		return c.remote, p.sendLimit(c.maxDatagram)
	}
	addr := p.responses[0].addr
	if addr == c.remote {
		return addr, c.amp.limit(p.sendLimit(c.maxDatagram))
	}
	budget := c.maxDatagram
	for _, r := range p.responses {
		if r.addr == addr {
			budget = min(budget, r.budget)
		}
	}
	return addr, budget
}

// pathDatagram builds the next datagram of path validation into buf, and
// reports false when none can go now: an address under validation whose
// budget is spent waits for more datagrams from it, and responses to
// another address that has too small a budget are dropped.
func (c *Conn) pathDatagram(now time.Duration, buf []byte) ([]byte, bool) {
	p := &c.path
	addr, budget := c.pathTarget()
	if budget < pathFrameRoom || c.appWrite == nil {
		if addr != c.remote || c.appWrite == nil {
			p.dropResponses(addr)
		}
		return nil, false
	}
	dcid := c.cids.dcid()
	preferred := p.probe.preferredDue() && addr == p.probe.addr
	switch {
	case preferred:
		dcid = p.probe.dcid
	case addr != c.remote:
		// A new destination address gets a new connection ID when the
		// peer gave a spare one (RFC 9000 section 9.5).
		dcid = c.cids.spare()
	}
	w := &c.scratch().writer
	w.reset(buf, budget)
	sp := c.spaces[spaceApp]
	pk := plannedPacket{space: spaceApp, pn: sp.nextPN}
	pk.pnLen, _ = wire.PacketNumberLen(pk.pn, sp.largestAcked)
	if !w.startShortPacket(pk, c.appWrite, dcid) {
		return nil, false
	}
	p.appendResponses(w, addr)
	if !preferred && c.wantsAheadChallenge(addr) {
		if err := c.appendAheadChallenge(w, addr); err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "path challenge: %v", err))
			return nil, false
		}
	}
	if preferred {
		if err := c.appendProbeChallenge(w); err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "path probe: %v", err))
			return nil, false
		}
		p.probe.retryAt = now + max(probeTimeout(c.sender.RTT()), c.cfg.Recovery.InitialRTT)
	}
	if addr == c.remote && p.silencePing {
		w.appendPing(fkPathProbe) // never sent again, no congestion signal
		p.silencePing = false
		p.stats.SilencePings++
	}
	if addr == c.remote && p.validating && p.challengeDue {
		if err := c.appendChallenge(now, w); err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "path challenge: %v", err))
			return nil, false
		}
	}
	pkt := w.finishPacket()
	if pkt == nil {
		return nil, false
	}
	w.padTo(min(pathDatagramSize, budget))
	if addr != c.remote {
		p.out = addr
	}
	out := c.sealDatagram(now, w)
	if out == nil {
		return nil, false
	}
	if err := c.sender.MarkPathProbe(spaceApp, pkt.pn); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "path validation: %v", err))
		return nil, false
	}
	return out, true
}

// appendResponses appends the PATH_RESPONSE frames owed to addr that fit,
// and forgets them: a response is never sent again (RFC 9000 section
// 13.3).
func (p *peerPath) appendResponses(w *packetWriter, addr netip.AddrPort) {
	keep := p.responses[:0]
	for _, r := range p.responses {
		f := wire.PathResponseFrame{Data: r.data}
		if r.addr != addr || !w.appendFrame(f.Len(), f.Append) {
			keep = append(keep, r)
			continue
		}
		w.record(sentFrame{kind: fkPathResponse})
		p.stats.ResponsesSent++
	}
	clear(p.responses[len(keep):])
	p.responses = keep
}

// dropResponses forgets the responses owed to addr.
func (p *peerPath) dropResponses(addr netip.AddrPort) {
	keep := p.responses[:0]
	for _, r := range p.responses {
		if r.addr != addr {
			keep = append(keep, r)
		}
	}
	clear(p.responses[len(keep):])
	p.responses = keep
}

// appendChallenge appends a new PATH_CHALLENGE for c.remote, with data
// drawn from Config.Rand, and times the next one.
func (c *Conn) appendChallenge(now time.Duration, w *packetWriter) error {
	p := &c.path
	data, ok, err := c.writeChallenge(w)
	if !ok {
		return err
	}
	p.challenges = rememberChallenge(p.challenges, data)
	p.challengeDue = false
	p.retryAt = now + probeTimeout(c.sender.RTT())
	p.stats.ChallengesSent++
	return nil
}

// dest is where the datagram just built goes: c.remote, or the address of
// a PATH_RESPONSE to another path.
func (p *peerPath) dest(remote netip.AddrPort) netip.AddrPort {
	if p.out.IsValid() {
		return p.out
	}
	return remote
}
