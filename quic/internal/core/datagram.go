package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// DATAGRAM frames (RFC 9221): unreliable application datagrams carried in
// 1-RTT (and 0-RTT) packets. Both ends offer them in the
// max_datagram_frame_size transport parameter (Config.EnableDatagrams);
// an endpoint sends them only when the peer offered them. A datagram is
// never sent again when its packet is lost and is not flow controlled,
// but the packets that carry it are ack-eliciting, counted in flight,
// congestion controlled and paced like any other (RFC 9221 section 5).
//
// Both directions have a bounded queue. SendDatagram drops the oldest
// queued datagram when its queue is full: what waits behind a full
// congestion window grows stale, and a tunnel or a media flow prefers the
// newest packets. A datagram that arrives while the receive queue is full
// is dropped. Both count what they drop (DatagramStats).
//
// The frame types and their encoding are package wire's; this file holds
// the state and the API, datagram_send.go puts queued datagrams into
// packets, datagram_recv.go takes them out of received ones.

// Defaults of Config's datagram queues.
const (
	DefaultDatagramSendQueue    = 256
	DefaultDatagramReceiveQueue = 256
)

// ErrDatagramsNotNegotiated: this endpoint did not enable DATAGRAM frames,
// or the peer did not offer them (or its transport parameters have not
// arrived yet).
var ErrDatagramsNotNegotiated = errors.New("quic: DATAGRAM frames not negotiated")

// DatagramTooLargeError is SendDatagram's refusal of a datagram that does
// not fit in a packet now, or exceeds the peer's max_datagram_frame_size.
type DatagramTooLargeError struct {
	// MaxDataLen is the largest datagram payload that fits now.
	MaxDataLen int
}

func (e *DatagramTooLargeError) Error() string {
	return fmt.Sprintf("quic: DATAGRAM payload too large (at most %d bytes now)", e.MaxDataLen)
}

// DatagramStats counts a connection's DATAGRAM frames (RFC 9221), not its
// UDP datagrams.
type DatagramStats struct {
	// Queued counts the datagrams SendDatagram accepted; Sent those put
	// in packets; Lost those whose packet was declared lost (never sent
	// again); SendDropped those dropped before they were sent: the oldest
	// of a full queue, or one that no longer fits because the path or the
	// peer's limit shrank.
	Queued, Sent, Lost, SendDropped uint64
	// Received counts the datagrams that arrived, RebuiltByFEC those
	// among them that came in packets FEC rebuilt, ReceiveDropped those
	// that arrived while the receive queue was full.
	Received, RebuiltByFEC, ReceiveDropped uint64
}

// datagramState is a connection's DATAGRAM frames: whether this endpoint
// offered them, the peer's limit, and the two queues.
type datagramState struct {
	enabled bool
	// frameLimit is the max_datagram_frame_size this endpoint offers:
	// the largest UDP payload it receives (Config.MaxReceiveDatagramSize),
	// so any DATAGRAM frame that fits in a packet it can take. (RFC 9221
	// section 3 recommends 65535 for that, which says the same.) It
	// depends only on the Config, so a server does not lower it under a
	// ticket that allows 0-RTT (section 3; honorsTicket checks it).
	frameLimit uint64
	// peerMax is the peer's max_datagram_frame_size: 0 until its
	// transport parameters (or, for 0-RTT, the remembered ones) say
	// otherwise, or when it offered none.
	peerMax uint64
	// sendQ holds the datagrams to send, oldest first; spare the bodies
	// of sent ones for reuse.
	sendQ ring[queuedDatagram]
	recvQ ring[[]byte]
	spare [][]byte
	// recvSpare holds buffers of received datagrams the application gave
	// back (RecycleDatagram), for the next ones to arrive: a tunnel
	// receives hundreds of thousands a second, and a fresh allocation
	// for each cost more than the rest of its way through the core.
	recvSpare            [][]byte
	sendLimit, recvLimit int
	// overloaded: the send queue overflowed while the window was open,
	// and has not drained to half its size since (fec_overload.go).
	overloaded bool
	// notified: EventDatagramReceived was queued since the receive queue
	// was last emptied.
	notified bool
	stats    DatagramStats
}

// init sets the state up from a Config with its defaults.
func (d *datagramState) init(cfg *Config) {
	d.enabled = cfg.EnableDatagrams
	d.frameLimit = uint64(cfg.MaxReceiveDatagramSize)
	d.sendLimit, d.recvLimit = cfg.DatagramSendQueue, cfg.DatagramReceiveQueue
}

// addParam offers DATAGRAM frames in the transport parameters (RFC 9221
// section 3).
func (d *datagramState) addParam(p *wire.TransportParameters) {
	if d.enabled {
		p.MaxDatagramFrameSize = d.frameLimit
	}
}

// setPeer takes the peer's max_datagram_frame_size: from its transport
// parameters, or remembered from an earlier connection for 0-RTT. A peer
// that no longer offers them gets none of those queued.
func (d *datagramState) setPeer(limit uint64) {
	d.peerMax = limit
	if limit == 0 {
		for d.sendQ.len() > 0 {
			d.recycle(d.sendQ.popFront())
			d.stats.SendDropped++
		}
	}
}

// negotiated reports whether datagrams may be sent: this endpoint enabled
// them and the peer offered them.
func (d *datagramState) negotiated() bool { return d.enabled && d.peerMax > 0 }

// hasQueued reports whether datagrams wait to be sent.
func (d *datagramState) hasQueued() bool { return d.sendQ.len() > 0 }

// maxDatagramHead is the longest prefix a queued datagram keeps in its
// entry beside its body: an HTTP/3 Quarter Stream ID and a CONNECT-IP
// Context ID (RFC 9297 section 2.1, RFC 9484 section 6), a varint each.
const maxDatagramHead = 16

// queuedDatagram is a datagram waiting in the send queue: a short head
// (the framing of a layer above) and a body, which the queue owns. The
// DATAGRAM frame carries the two joined (appendDatagramFrame), so that a
// body handed over by the application (GiveDatagram) needs no copy to be
// queued.
type queuedDatagram struct {
	head    [maxDatagramHead]byte
	headLen uint8
	body    []byte
}

// dataLen is the datagram's length, head and body.
func (q *queuedDatagram) dataLen() int { return int(q.headLen) + len(q.body) }

// recycle keeps the body of a datagram that left the send queue.
func (d *datagramState) recycle(q queuedDatagram) {
	if len(d.spare) < d.sendLimit {
		d.spare = append(d.spare, q.body[:0])
	}
}

// takeSpare returns the body of a datagram sent before, emptied, or nil.
func (d *datagramState) takeSpare() []byte {
	n := len(d.spare)
	if n == 0 {
		return nil
	}
	b := d.spare[n-1]
	d.spare[n-1] = nil
	d.spare = d.spare[:n-1]
	return b
}

// queue copies prefix and b, one datagram, into the send queue, dropping
// the oldest datagram when the queue is full, which it reports.
func (d *datagramState) queue(prefix, b []byte) (dropped bool) {
	var q queuedDatagram
	body := d.takeSpare()
	if len(prefix) <= maxDatagramHead {
		q.headLen = uint8(copy(q.head[:], prefix))
	} else {
		body = append(body, prefix...)
	}
	q.body = append(body, b...)
	return d.push(q)
}

// give queues prefix and b, one datagram, taking b itself as the body,
// and returns a body of a datagram sent before in exchange (nil when none
// is spare). A prefix longer than a queued datagram's head is joined to a
// copy, and b stays the caller's: it is returned.
func (d *datagramState) give(prefix, b []byte) (spare []byte, dropped bool) {
	if len(prefix) > maxDatagramHead {
		return b, d.queue(prefix, b)
	}
	q := queuedDatagram{headLen: uint8(len(prefix)), body: b}
	copy(q.head[:], prefix)
	spare = d.takeSpare()
	return spare, d.push(q)
}

// push adds q to the send queue, dropping the oldest datagram when the
// queue is full, which it reports.
func (d *datagramState) push(q queuedDatagram) (dropped bool) {
	if d.sendQ.len() >= d.sendLimit {
		d.recycle(d.sendQ.popFront())
		d.stats.SendDropped++
		dropped = true
	}
	d.sendQ.pushBack(q)
	d.stats.Queued++
	return dropped
}

// DatagramsEnabled reports whether this endpoint offers DATAGRAM frames
// (Config.EnableDatagrams), whatever the peer does.
func (c *Conn) DatagramsEnabled() bool { return c.dgram.enabled }

// SupportsDatagrams reports whether DATAGRAM frames were negotiated: this
// endpoint enabled them and the peer's transport parameters (or, in
// 0-RTT, the remembered ones) offer them.
func (c *Conn) SupportsDatagrams() bool { return c.dgram.negotiated() }

// MaxDatagramPayloadSize is the largest payload SendDatagram takes now, 0 when
// DATAGRAM frames are not negotiated. It follows the path: it grows as
// path MTU discovery raises the datagram size, and shrinks with it.
func (c *Conn) MaxDatagramPayloadSize() int { return c.maxDatagramPayload() }

// DatagramSendRoom is how many datagrams SendDatagram takes now without
// dropping a queued one.
func (c *Conn) DatagramSendRoom() int { return max(c.dgram.sendLimit-c.dgram.sendQ.len(), 0) }

// SendDatagram queues a copy of b for the next packets (RFC 9221 section
// 5). It fails with ErrDatagramsNotNegotiated, with a
// *DatagramTooLargeError when b does not fit in a packet now, and with
// ErrClosed once the connection closes. A full queue drops its oldest
// datagram.
func (c *Conn) SendDatagram(now time.Duration, b []byte) error {
	return c.SendPrefixedDatagram(now, nil, b)
}

// SendPrefixedDatagram is SendDatagram of prefix and b joined, copied once
// into the queue: how a layer above frames its datagrams (HTTP/3's
// Quarter Stream ID, RFC 9297 section 2.1) without a copy of its own.
func (c *Conn) SendPrefixedDatagram(now time.Duration, prefix, b []byte) error {
	if err := c.checkDatagram(len(prefix) + len(b)); err != nil {
		return err
	}
	if c.dgram.queue(prefix, b) {
		c.onSendQueueOverflow(now)
	}
	return nil
}

// GiveDatagrams is SendPrefixedDatagram of each of bs, in order, without
// the copy: the queue takes each buffer itself, which the caller no
// longer touches, and puts in its place in bs an empty buffer the
// connection no longer uses (the body of a datagram sent before, nil when
// none is spare), which the caller then owns. A tunnel reads its device
// into buffers it gives this way, so that each packet is copied once on
// its way out, into the QUIC packet. It stops at the first refusal and
// returns how many it took, and the refusal; bs[n:] stay the caller's as
// they were. The checks that hold for the whole batch are made once.
func (c *Conn) GiveDatagrams(now time.Duration, prefix []byte, bs [][]byte) (int, error) {
	if err := c.checkDatagram(0); err != nil {
		return 0, err
	}
	limit := c.maxDatagramPayload()
	for i, b := range bs {
		if len(prefix)+len(b) > limit {
			return i, &DatagramTooLargeError{MaxDataLen: limit}
		}
		spare, dropped := c.dgram.give(prefix, b)
		if dropped {
			c.onSendQueueOverflow(now)
		}
		bs[i] = spare
	}
	return len(bs), nil
}

// checkDatagram is SendPrefixedDatagram's refusal of a datagram of n
// bytes, if any.
func (c *Conn) checkDatagram(n int) error {
	if err := c.state.checkOpen(); err != nil {
		return err
	}
	if !c.dgram.negotiated() {
		return ErrDatagramsNotNegotiated
	}
	if limit := c.maxDatagramPayload(); n > limit {
		return &DatagramTooLargeError{MaxDataLen: limit}
	}
	return nil
}

// maxRecycledDatagrams bounds the buffers RecycleDatagram keeps: a few
// batches of a reader that gives back each batch's buffers with the next
// call (http3 reads 64 at a time). More would only keep the peak of a
// burst allocated for the connection's life: up to a receive queue's
// worth (4096 full-size packets on a tunnel, 6 MB) for each connection a
// client once flooded.
const maxRecycledDatagrams = 256

// RecycleDatagram takes back the buffer of a datagram ReceiveDatagram
// returned, which the caller no longer uses, for a datagram to come; it
// keeps at most as many as the receive queue holds, and at most
// maxRecycledDatagrams. ReleaseIdle drops them. A datagram block beyond
// those goes back to the process's pool (pool.go).
func (c *Conn) RecycleDatagram(b []byte) {
	d := &c.dgram
	switch {
	case cap(b) == 0:
	case len(d.recvSpare) < min(d.recvLimit, maxRecycledDatagrams):
		d.recvSpare = append(d.recvSpare, b[:0])
	case cap(b) == datagramBlockSize:
		putDatagramBlock((*datagramBlock)(b[:datagramBlockSize]))
	}
}

// ReceiveDatagram returns the oldest received datagram, which the caller
// then owns (until it gives it back with RecycleDatagram), and false when none waits. EventDatagramReceived tells when
// one arrived after the queue was emptied. Datagrams received before the
// connection closed stay readable.
func (c *Conn) ReceiveDatagram() ([]byte, bool) {
	d := &c.dgram
	if d.recvQ.len() == 0 {
		d.notified = false
		return nil, false
	}
	b := d.recvQ.popFront()
	if d.recvQ.len() == 0 {
		d.notified = false
	}
	return b, true
}
