package core

import (
	"errors"
	"net/netip"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// HandleDatagram processes a UDP datagram that arrived at now from the
// peer. The Conn may modify data in place and does not keep it. Malformed
// or undecryptable packets are dropped (RFC 9000 section 12.2); a protocol
// violation inside an authenticated packet closes the connection.
// HandleDatagram is HandleDatagramECN for a datagram whose codepoint is
// unknown.
func (c *Conn) HandleDatagram(now time.Duration, from netip.AddrPort, data []byte) {
	c.HandleDatagramECN(now, from, data, ECNNotECT)
}

// HandleDatagramECN is HandleDatagram for a datagram that arrived with the
// ECN codepoint ecn in its IP header, which the connection counts for its
// ACK frames (RFC 9000 section 13.4.1).
func (c *Conn) HandleDatagramECN(now time.Duration, from netip.AddrPort, data []byte, ecn ECN) {
	c.now = now
	c.ecn.rx = ecn & 0b11
	switch c.state {
	case stateDraining, stateClosed:
		return
	case stateClosing:
		c.onDatagramWhileClosing()
		return
	}
	c.stats.DatagramsReceived++
	c.stats.BytesReceived += uint64(len(data))
	c.rxDatagramLen = len(data)
	if !c.addrValidated {
		c.ampReceived += uint64(len(data))
		c.updateAmplification(now)
	}
	// The tail is copied before packet protection is removed in place:
	// a Stateless Reset is recognized by it (RFC 9000 section 10.3.1).
	var tail [resetTokenLen]byte
	mayBeReset := len(data) >= crypto.MinStatelessResetLen && !wire.IsLongHeader(data[0])
	if mayBeReset {
		copy(tail[:], data[len(data)-resetTokenLen:])
	}
	first := true
	for len(data) > 0 && c.state == stateActive {
		n, ok := c.handlePacket(now, data)
		if !ok && first && mayBeReset && c.cids.matchesReset(tail[:]) {
			c.onStatelessReset()
			return
		}
		if !ok {
			c.stats.PacketsDropped++
		}
		first = false
		data = data[n:]
	}
	if len(c.undecryptable.pkts) > 0 && c.state == stateActive {
		c.processHeld(now)
	}
}

// handlePacket processes the first packet of data and returns its length
// and whether it was processed.
func (c *Conn) handlePacket(now time.Duration, data []byte) (int, bool) {
	if !wire.IsLongHeader(data[0]) {
		c.rxPacketLen = len(data)
		return len(data), c.handleShort(now, data)
	}
	if c.isClient && isVersionNegotiation(data) {
		return len(data), c.onVersionNegotiation(data)
	}
	h, pnOffset, err := wire.ParseLongHeader(data)
	if err != nil {
		// Unparsable: the rest of the datagram cannot be split into
		// packets.
		return len(data), false
	}
	if h.Version != c.version {
		return c.handleOtherVersion(data, &h, pnOffset)
	}
	if h.Type == wire.PacketTypeRetry {
		return len(data), c.onRetry(data, &h)
	}
	size := pnOffset + int(h.Length)
	c.rxPacketLen = size
	if h.Type == wire.PacketType0RTT {
		return size, c.handle0RTT(now, data[:size], &h, pnOffset)
	}
	return size, c.handleLong(now, data[:size], &h, pnOffset)
}

// handleLong processes an Initial or Handshake packet.
func (c *Conn) handleLong(now time.Duration, pkt []byte, h *wire.LongHeader, pnOffset int) bool {
	s, _ := spaceOfPacketType(h.Type)
	sp := c.spaces[s]
	if sp.discarded || !c.acceptLongIDs(h) {
		return false
	}
	if sp.read == nil {
		return c.hold(pkt, h.Type) // RFC 9001 section 5.7
	}
	if !c.isClient && h.Type == wire.PacketTypeInitial && c.rxDatagramLen < minInitialDatagram {
		// RFC 9000 section 14.1: a server drops an Initial packet in a
		// datagram of less than 1200 bytes.
		return false
	}
	pn, payload, ok := c.openLong(sp, pkt, pnOffset)
	if !ok {
		return false
	}
	if !c.peerSCIDSet {
		c.peerSCIDSet = true
		c.cids.setPeerInitial(h.SrcConnID)
	}
	return c.onPacket(now, s, h.Type, pn, pkt[0], payload, h.DstConnID)
}

// acceptLongIDs checks the connection IDs of a long header: the
// Destination must be ours (a server also accepts the client's original
// one), and once the peer's first Initial was processed its Source must
// not change (RFC 9000 section 7.2).
func (c *Conn) acceptLongIDs(h *wire.LongHeader) bool {
	if !c.cids.isLocalID(h.DstConnID) && (c.isClient || h.DstConnID != c.initialDCID()) {
		return false
	}
	return !c.peerSCIDSet || h.SrcConnID == c.cids.peerInitialSCID
}

// openLong removes header and packet protection from a long header
// packet (RFC 9001 section 5).
func (c *Conn) openLong(sp *pnSpace, pkt []byte, pnOffset int) (uint64, []byte, bool) {
	pnLen, truncated, err := sp.read.Header().Remove(pkt, pnOffset)
	if err != nil {
		return 0, nil, false
	}
	pn, err := wire.DecodePacketNumber(c.largestReceived(sp), truncated, pnLen)
	if err != nil {
		return 0, nil, false
	}
	payload, err := sp.read.Packet().Open(pkt, pnOffset+pnLen, pn)
	if err != nil {
		c.onDecryptFailure(err)
		return 0, nil, false
	}
	return pn, payload, true
}

// largestReceived is the largest packet number received in a space, for
// packet number decoding (RFC 9000 appendix A.3).
func (c *Conn) largestReceived(sp *pnSpace) uint64 {
	if !sp.acks.hasLargest {
		return wire.InvalidPacketNumber
	}
	return sp.acks.largest
}

// handleShort processes a 1-RTT packet.
func (c *Conn) handleShort(now time.Duration, pkt []byte) bool {
	h, pnOffset, err := wire.ParseShortHeader(pkt, c.cfg.ConnIDLen)
	if err != nil || !c.cids.isLocalID(h.DstConnID) {
		return false
	}
	if c.keysFor(wire.PacketType1RTT) != keysReady {
		// RFC 9001 section 5.7: no 1-RTT processing before the keys
		// arrive, nor at a server before its handshake completes.
		return c.hold(pkt, wire.PacketType1RTT)
	}
	sp := c.spaces[spaceApp]
	pnLen, truncated, err := c.appRead.Header().Remove(pkt, pnOffset)
	if err != nil {
		return false
	}
	pn, err := wire.DecodePacketNumber(c.largestReceived(sp), truncated, pnLen)
	if err != nil {
		return false
	}
	gen, key := c.appRead.Select(crypto.KeyPhase(pkt[0]), pn)
	payload, err := key.Open(pkt, pnOffset+pnLen, pn)
	if err != nil {
		c.onDecryptFailure(err)
		return false
	}
	if sp.acks.isDuplicate(pn) {
		c.stats.PacketsDuplicate++
		return true
	}
	if err := c.onKeyPhase(gen, pn); err != nil {
		c.closeWithError(err)
		return true
	}
	c.onOneRTTReceived()
	return c.onPacket(now, spaceApp, wire.PacketType1RTT, pn, pkt[0], payload, h.DstConnID)
}

// onDecryptFailure counts packets that failed authentication; reaching the
// integrity limit closes the connection (RFC 9001 section 6.6).
func (c *Conn) onDecryptFailure(err error) {
	if !errors.Is(err, crypto.ErrAuthentication) {
		return
	}
	c.stats.DecryptionFailures++
	if c.stats.DecryptionFailures >= crypto.ChaCha20IntegrityLimit {
		c.closeLocal(transportError(wire.CodeAEADLimitReached, 0, "%d packets failed authentication", c.stats.DecryptionFailures))
	}
}

// onPacket processes the frames of an authenticated packet and records it
// for acknowledgement.
func (c *Conn) onPacket(now time.Duration, s recovery.Space, pt wire.PacketType, pn uint64, first byte, payload []byte, dcid wire.ConnectionID) bool {
	sp := c.spaces[s]
	if sp.acks.isDuplicate(pn) {
		c.stats.PacketsDuplicate++
		return true
	}
	if err := wire.CheckReservedBits(first); err != nil {
		c.closeWithError(err)
		return true
	}
	c.stats.PacketsReceived++
	ce := c.ecn.onReceived(s)
	c.idle.onReceive(now)
	cryptoBefore := sp.cryptoRecv.received()
	eliciting, err := c.processFrames(s, pt, payload, dcid)
	c.qlogPacketReceived(pt, pn)
	if err == nil && eliciting && s != spaceApp && !sp.discarded && sp.cryptoRecv.received() == cryptoBefore {
		c.onPeerProbe() // handshake_speedup.go
	}
	if err == nil && c.fec != nil && s == spaceApp && c.state == stateActive {
		err = c.afterFECPacket(payload, dcid)
	}
	if err != nil {
		c.closeWithError(err)
		return true
	}
	if s == spaceHandshake && !c.isClient && !c.addrValidated {
		// RFC 9000 section 8.1: a Handshake packet proves the address;
		// RFC 9001 section 4.9.1: the server drops its Initial keys.
		c.addrValidated = true
		c.ampLimited = false
		c.sender.SetAmplificationLimited(now, false)
		c.dropSpace(spaceInitial)
	}
	if sp.discarded {
		return true // the packet confirmed the handshake and dropped its space
	}
	sp.acks.onPacket(now, pn, eliciting, c.ackPolicy(s))
	if ce && eliciting {
		// RFC 9000 section 13.2.1: a CE-marked packet is acknowledged
		// at once, so that the peer reacts to congestion sooner.
		sp.acks.ackNow()
	}
	return true
}

// ackPolicy is the ACK policy of a space: Initial and Handshake packets
// are acknowledged at once (RFC 9000 section 13.2.1).
// 1-RTT packets are acknowledged after AckElicitingThreshold of them, or
// more on fast paths (ackrate.go).
func (c *Conn) ackPolicy(s recovery.Space) ackPolicy {
	threshold := c.cfg.AckElicitingThreshold
	if s == spaceApp && !c.cfg.NoAckRateAdaptation {
		c.ackRate.onPacket(c.now, c.sender.RTT().SmoothedRTT())
		threshold = c.ackRate.threshold(threshold)
	}
	return ackPolicy{
		immediate: s != spaceApp,
		maxDelay:  c.cfg.MaxAckDelay,
		threshold: threshold,
	}
}
