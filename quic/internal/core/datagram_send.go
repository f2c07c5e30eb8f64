package core

import (
	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Sending DATAGRAM frames: queued datagrams go into application packets
// after the control frames and before stream data (packetizer_app.go),
// as many as fit, so that a datagram waits behind no bulk transfer. Each
// frame carries its Length field: the frame that runs to the end of the
// packet (type 0x30) would take in any PADDING appended after it.
//
// A datagram that does not fit in the packet being built waits for the
// next one; one that would not fit in an empty packet either (the path's
// datagram size or the peer's limit shrank since SendDatagram took it) is
// dropped, so that it never holds the queue. A packet with DATAGRAM frames
// is a FEC source symbol when FEC protects the connection (fec_send.go).

// maxPacketNumberLen is the longest packet number encoding (RFC 9000
// section 17.1), which the largest datagram leaves room for whatever the
// number of packets in flight.
const maxPacketNumberLen = 4

// maxDatagramPayload is the largest datagram payload a DATAGRAM frame
// carries in an empty application packet of the kind sent now (0-RTT or
// 1-RTT) in a datagram of the path's size, within the peer's
// max_datagram_frame_size; 0 when DATAGRAM frames are not negotiated.
func (c *Conn) maxDatagramPayload() int {
	if !c.dgram.negotiated() || len(c.cids.peer) == 0 {
		return 0
	}
	early := c.early.sending()
	room := c.maxDatagram - crypto.TagLen - c.appHeaderMaxLen(early)
	if c.fec.protects(spaceApp, early) {
		room -= fecReserve
	}
	n, ok := wire.MaxDatagramDataLen(room, true)
	if !ok {
		return 0
	}
	frameLimit := int(min(c.dgram.peerMax, uint64(c.maxDatagram)))
	m, ok := wire.MaxDatagramDataLen(frameLimit, true)
	if !ok {
		return 0
	}
	return min(n, m)
}

// appHeaderMaxLen is the longest header of an application packet this
// connection sends now: a 0-RTT packet's long header (RFC 9000 section
// 17.2.3) or a 1-RTT packet's short one (section 17.3.1).
func (c *Conn) appHeaderMaxLen(early bool) int {
	dcid := c.cids.dcid().Len()
	if early {
		// Flags, version, both connection IDs with their lengths, the
		// Length field, the packet number.
		return 1 + 4 + 1 + dcid + 1 + c.cids.local[0].id.Len() + lengthFieldLen + maxPacketNumberLen
	}
	return 1 + dcid + maxPacketNumberLen
}

// appendDatagrams appends the queued datagrams that fit in w's current
// packet, oldest first, and drops those that fit in no packet now.
func (c *Conn) appendDatagrams(w *packetWriter) {
	d := &c.dgram
	appended := false
	for d.sendQ.len() > 0 {
		q := d.sendQ.at(0)
		n := q.dataLen()
		if appendDatagramFrame(w, q) {
			d.recycle(d.sendQ.popFront())
			d.stats.Sent++
			w.record(sentFrame{kind: fkDatagram, n: uint64(n)})
			appended = true
			continue
		}
		// After a datagram the next one waits for the next packet, where
		// it comes first and is dropped there if it fits in no packet: a
		// tunnel's packets take one each, and the size that fits is not
		// worked out for each of them.
		if appended || n <= c.maxDatagramPayload() {
			return // the next packet has room
		}
		d.recycle(d.sendQ.popFront())
		d.stats.SendDropped++
	}
}

// appendDatagramFrame appends q as a DATAGRAM frame with its Length field
// (RFC 9221 section 4), head and body joined, if it fits in w's current
// packet, and reports whether it did.
func appendDatagramFrame(w *packetWriter, q *queuedDatagram) bool {
	n := uint64(q.dataLen())
	if 1+wire.VarintLen(n)+int(n) > w.room() {
		return false
	}
	b := append(w.b, byte(wire.FrameTypeDatagramWithLen))
	b, err := wire.AppendVarint(b, n)
	if err != nil {
		w.fail(err)
		return false
	}
	w.b = append(append(b, q.head[:q.headLen]...), q.body...)
	return true
}

// onDatagramLost counts a datagram whose packet was lost: unlike other
// frames it is not sent again (RFC 9221 section 5.2); its packet still
// counts as lost for congestion control.
func (d *datagramState) onDatagramLost() { d.stats.Lost++ }

// hasFECSourceData reports whether a packet's frames make it a FEC source
// symbol: the application's data, STREAM or DATAGRAM frames.
func hasFECSourceData(frames []sentFrame) bool {
	for i := range frames {
		if k := frames[i].kind; k == fkStream || k == fkDatagram {
			return true
		}
	}
	return false
}
