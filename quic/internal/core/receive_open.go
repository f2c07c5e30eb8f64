package core

// The receive path, stage 3 of 6: opening a packet. Header protection is
// removed and the packet number decoded (RFC 9001 section 5.4, RFC 9000
// appendix A.3), then packet protection (RFC 9001 section 5.3): what fails
// is dropped, and failed authentications are counted against the
// integrity limit. An opened packet that was received before is dropped
// (RFC 9000 section 12.3), a 1-RTT packet's key phase may start a key
// update (keyupdate.go), and non-zero reserved bits close the connection
// (section 17.2).
//
// Next: receive_frames.go, the packet's frames.

import (
	"errors"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// openLong opens an Initial, 0-RTT or Handshake packet of space s with
// keys. Once one is authenticated, the peer's Source Connection ID is the
// one its later long headers must carry (RFC 9000 section 7.2).
func (c *Conn) openLong(now time.Duration, s recovery.Space, keys *crypto.Keys, pkt []byte, h *wire.LongHeader, pnOffset int) bool {
	pn, hdrLen, err := unprotectHeader(keys.Header(), c.spaces[s].acks.largestReceived(), pkt, pnOffset)
	if err != nil {
		return false
	}
	payload, err := keys.Packet().Open(pkt, hdrLen, pn)
	if err != nil {
		c.onDecryptFailure(err)
		return false
	}
	if !c.peerSCIDSet {
		c.peerSCIDSet = true
		c.cids.setPeerInitial(h.SrcConnID)
	}
	return c.onOpened(now, s, h.Type, pn, pkt[0], payload, h.DstConnID)
}

// openShort opens a 1-RTT packet with the keys of its key phase (RFC 9001
// section 6.3). A duplicate is dropped before its key phase is looked at.
func (c *Conn) openShort(now time.Duration, pkt []byte, pnOffset int, dcid wire.ConnectionID) bool {
	sp := c.spaces[spaceApp]
	pn, hdrLen, err := unprotectHeader(c.appRead.Header(), sp.acks.largestReceived(), pkt, pnOffset)
	if err != nil {
		return false
	}
	gen, key := c.appRead.Select(crypto.KeyPhase(pkt[0]), pn)
	payload, err := key.Open(pkt, hdrLen, pn)
	if err != nil {
		c.onDecryptFailure(err)
		return false
	}
	if sp.acks.isDuplicate(pn) {
		c.stats.PacketsDuplicate++
		return true
	}
	if err := c.ku.onOpened(now, probeTimeout(c.sender.RTT()), c.appRead, c.appWrite, gen, pn); err != nil {
		c.closeLocal(asTransportError(err))
		return true
	}
	c.early.onOneRTTReceived(now, probeTimeout(c.sender.RTT()))
	return c.onOpened(now, spaceApp, wire.PacketType1RTT, pn, pkt[0], payload, dcid)
}

// unprotectHeader removes header protection in place with hk (RFC 9001
// section 5.4) and decodes the packet number against the largest one
// received in its space, largest (RFC 9000 appendix A.3). It returns the
// packet number and the length of the header, which packet protection
// authenticates.
func unprotectHeader(hk *crypto.HeaderKey, largest uint64, pkt []byte, pnOffset int) (pn uint64, hdrLen int, err error) {
	pnLen, truncated, err := hk.Remove(pkt, pnOffset)
	if err != nil {
		return 0, 0, err
	}
	pn, err = wire.DecodePacketNumber(largest, truncated, pnLen)
	if err != nil {
		return 0, 0, err
	}
	return pn, pnOffset + pnLen, nil
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

// onOpened drops a packet of space s that was received before, checks the
// reserved bits of its unprotected first byte, and hands it to stage 4. It
// reports true: an authenticated packet counts as processed, a duplicate
// too, and makes its datagram no Stateless Reset.
func (c *Conn) onOpened(now time.Duration, s recovery.Space, pt wire.PacketType, pn uint64, first byte, payload []byte, dcid wire.ConnectionID) bool {
	if c.spaces[s].acks.isDuplicate(pn) {
		c.stats.PacketsDuplicate++
		return true
	}
	if err := wire.CheckReservedBits(first); err != nil {
		c.closeLocal(asTransportError(err))
		return true
	}
	c.processPacket(now, s, pt, pn, payload, dcid)
	return true
}
