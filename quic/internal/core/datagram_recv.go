package core

import (
	"github.com/satquic/satquic/quic/internal/wire"
)

// Receiving DATAGRAM frames: the frame loop (receive_frames.go) hands each
// one here, from a packet that arrived or from one FEC rebuilt; its data
// is copied into the receive queue, which the application drains with
// ReceiveDatagram.

// onDatagramFrame handles a DATAGRAM frame; rebuilt: its packet was
// rebuilt by FEC (fec_recv.go). A frame this endpoint did not offer to
// take, or larger than it offered, is a PROTOCOL_VIOLATION (RFC 9221
// section 3).
func (c *Conn) onDatagramFrame(f *wire.DatagramFrame, rebuilt bool) error {
	d := &c.dgram
	if !d.enabled {
		return transportError(wire.CodeProtocolViolation, f.Type(), "DATAGRAM frame not negotiated")
	}
	if uint64(f.Len()) > d.frameLimit {
		return transportError(wire.CodeProtocolViolation, f.Type(), "DATAGRAM frame of %d bytes above max_datagram_frame_size %d", f.Len(), d.frameLimit)
	}
	d.stats.Received++
	if rebuilt {
		d.stats.RebuiltByFEC++
	}
	// A datagram behind a source packet still missing waits for its
	// rebuild (fec_order.go).
	if !c.holdDatagram(f.Data) {
		c.deliverDatagram(f.Data)
	}
	return nil
}

// deliverDatagram puts a copy of data into the receive queue, or drops it
// if the queue is full. The frame's data aliases the packet (or FEC's
// rebuilt symbol), which is reused: the application gets a copy of its
// own, in a buffer it gave back if one is large enough.
func (c *Conn) deliverDatagram(data []byte) {
	d := &c.dgram
	if d.recvQ.len() >= d.recvLimit {
		d.stats.ReceiveDropped++
		return
	}
	c.deliverOwnDatagram(append(d.takeRecvBuffer(len(data)), data...))
}

// deliverOwnDatagram puts data, a copy of the connection's own (a held
// datagram, fec_order.go), into the receive queue, or drops it if the
// queue is full and keeps its buffer for the next one.
func (c *Conn) deliverOwnDatagram(data []byte) {
	d := &c.dgram
	if d.recvQ.len() >= d.recvLimit {
		d.stats.ReceiveDropped++
		c.RecycleDatagram(data)
		return
	}
	d.recvQ.pushBack(data)
	if !d.notified {
		d.notified = true
		c.events.push(Event{Kind: EventDatagramReceived})
	}
}

// takeRecvBuffer returns an empty buffer for a received datagram of n
// bytes: a recycled one (RecycleDatagram) when the newest fits, else one
// of the process's datagram blocks for a datagram of a packet's size,
// else nil, which append allocates.
func (d *datagramState) takeRecvBuffer(n int) []byte {
	last := len(d.recvSpare) - 1
	if last < 0 || cap(d.recvSpare[last]) < n {
		if n > smallDatagram && n <= datagramBlockSize {
			return getDatagramBlock()[:0]
		}
		return nil
	}
	b := d.recvSpare[last]
	d.recvSpare[last] = nil
	d.recvSpare = d.recvSpare[:last]
	return b
}
