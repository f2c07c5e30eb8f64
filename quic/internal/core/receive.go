package core

// The receive path, stage 1 of 6: the datagram. Every datagram from the
// peer enters at HandleDatagram. It is counted (statistics, and the
// server's anti-amplification budget, RFC 9000 section 8.1), split into
// its coalesced packets (section 12.2), each handed to stage 2, and taken
// for a Stateless Reset when its first packet cannot be processed
// (section 10.3.1). Packets held for their keys are tried again at the
// end: the datagram may have brought those keys.
//
// Next: receive_packet.go, one packet's header.

import (
	"time"

	"github.com/satquic/satquic/internal/ecn"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// HandleDatagram processes a UDP datagram that arrived at now from the
// peer, with the ECN codepoint it arrived with, which the connection counts
// for its ACK frames (RFC 9000 section 13.4.1). The Conn may modify d.Data
// in place and does not keep it. Malformed or undecryptable packets are
// dropped (RFC 9000 section 12.2); a protocol violation inside an
// authenticated packet closes the connection.
func (c *Conn) HandleDatagram(now time.Duration, d Datagram) {
	if !c.fromServer(now, d.Addr) {
		c.path.stats.UnknownServerAddress++ // RFC 9000 section 9
		return
	}
	data := d.Data
	c.ecn.rx = d.ECN & ecn.Mask
	switch c.state {
	case stateDraining, stateClosed:
		return
	case stateClosing:
		c.closing.onDatagram()
		return
	}
	if !c.amp.validated && d.Addr != c.remote {
		// The anti-amplification limit is per address (RFC 9000 section
		// 8): what other addresses send must not buy this one a budget.
		// And a client does not migrate before the handshake is
		// confirmed (section 9), which comes after its address is
		// validated, so nothing from another address belongs here yet.
		c.stats.PacketsDropped++
		return
	}
	c.stats.DatagramsReceived++
	c.stats.BytesReceived += uint64(len(data))
	c.rxDatagramLen = len(data)
	c.path.onDatagram(now, d.Addr, c.remote, len(data))
	if !c.amp.validated {
		c.amp.onReceived(len(data))
		c.updateAmplification(now)
	}
	tail, mayBeReset := resetCandidate(data)
	first := true
	for len(data) > 0 && c.state == stateActive {
		n, ok := c.handlePacket(now, data)
		if !ok && first && mayBeReset && c.cids.matchesReset(tail[:]) {
			c.end(stateDraining, ErrStatelessReset) // RFC 9000 section 10.3.1
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

// resetCandidate returns the last bytes of a datagram that may be a
// Stateless Reset: one with a short header and long enough (RFC 9000
// section 10.3.1), which is recognized by them. They are copied before
// packet protection is removed in place.
func resetCandidate(data []byte) (tail [resetTokenLen]byte, ok bool) {
	if len(data) < crypto.MinStatelessResetLen || wire.IsLongHeader(data[0]) {
		return tail, false
	}
	copy(tail[:], data[len(data)-resetTokenLen:])
	return tail, true
}
