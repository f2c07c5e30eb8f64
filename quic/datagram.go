package quic

import (
	"context"
	"errors"
	"fmt"

	"github.com/satquic/satquic/quic/internal/core"
)

// DATAGRAM frames (RFC 9221) carry unreliable application datagrams on a
// connection, in quic-go's API: SendDatagram, ReceiveDatagram,
// ConnectionState().SupportsDatagrams. Both ends set
// Config.EnableDatagrams. A datagram is congestion controlled and paced
// like stream data but never sent again when its packet is lost, and is
// not flow controlled; with FEC its packets are protected like stream
// packets, and a datagram in a packet FEC rebuilt is delivered.
//
// Both directions are bounded queues (Config.DatagramSendQueue and
// DatagramReceiveQueue, 256 datagrams each by default). SendDatagram
// never blocks: when its queue is full, which happens when the
// application sends faster than the congestion window lets packets go,
// the oldest queued datagram is dropped, because what a tunnel or a media
// flow wants delivered is the newest. A datagram that arrives while the
// receive queue is full is dropped. ConnectionStats.Datagrams counts
// both.

// ErrDatagramsNotNegotiated: SendDatagram or ReceiveDatagram on a
// connection whose endpoint did not set Config.EnableDatagrams, or
// SendDatagram when the peer did not offer DATAGRAM frames (or its
// transport parameters have not arrived yet).
var ErrDatagramsNotNegotiated = errors.New("quic: DATAGRAM frames not negotiated")

// DatagramTooLargeError is SendDatagram's refusal of a datagram larger
// than a packet carries now, or than the peer takes.
type DatagramTooLargeError struct {
	// MaxDataLen is the largest payload that fits now
	// (Conn.MaxDatagramPayloadSize).
	MaxDataLen int64
}

func (e *DatagramTooLargeError) Error() string {
	return fmt.Sprintf("quic: DATAGRAM payload too large (at most %d bytes)", e.MaxDataLen)
}

// DatagramStats count a connection's DATAGRAM frames (RFC 9221), as
// opposed to ConnectionStats.DatagramsSent and DatagramsReceived, which
// count UDP datagrams.
type DatagramStats struct {
	// Queued counts the datagrams SendDatagram accepted, Sent those put
	// in packets, Lost those whose packet was declared lost (they are not
	// sent again), SendDropped those dropped before they were sent: the
	// oldest of a full queue, or one that no longer fit in a packet after
	// the path's size or the peer's limit shrank.
	Queued, Sent, Lost, SendDropped uint64
	// Received counts the datagrams that arrived, RebuiltByFEC those
	// among them whose packet FEC rebuilt, ReceiveDropped those that
	// arrived while the receive queue was full.
	Received, RebuiltByFEC, ReceiveDropped uint64
}

// SendDatagram queues a copy of b to go out in a DATAGRAM frame (RFC
// 9221) with the next packets, and returns at once. It fails with
// ErrDatagramsNotNegotiated, with a *DatagramTooLargeError when b does
// not fit (MaxDatagramPayloadSize), and with the connection's error once
// it closed. When the send queue is full the oldest queued datagram is
// dropped.
func (c *Conn) SendDatagram(b []byte) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	err := c.mapDatagramErr(c.core.SendDatagram(c.t.now(), b))
	c.mu.Unlock()
	if err == nil {
		c.signal()
	}
	return err
}

// SendDatagrams queues copies of bs, in order, as SendDatagram does each,
// under one lock and with one wake-up of the connection, which then
// packs them into packets sent together (one GSO send where the socket
// has it): how a tunnel hands over the packets it read in one go. It
// stops at the first datagram refused and returns how many it queued,
// and that refusal (a *DatagramTooLargeError concerns bs[n] alone).
func (c *Conn) SendDatagrams(bs [][]byte) (int, error) {
	return c.SendPrefixedDatagrams(nil, bs)
}

// SendPrefixedDatagrams is SendDatagrams of datagrams that each begin with
// prefix, then hold bs[i]: the connection copies the two once into its
// queue, so that a layer above that frames its datagrams with a header
// of its own (HTTP/3's Quarter Stream ID) needs no copy of its own. A
// *DatagramTooLargeError gives the largest size prefix included.
func (c *Conn) SendPrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	return c.queueDatagrams(context.Background(), prefix, bs, false, false)
}

// SendDatagramsWait is SendDatagrams that waits, rather than drop the
// oldest queued datagrams, while the send queue is full: the sender is
// held back to the rate the congestion controller lets packets go. It
// returns how many of bs it queued, and ctx's error, the connection's, or
// the refusal of bs[n] (as SendDatagrams).
func (c *Conn) SendDatagramsWait(ctx context.Context, bs [][]byte) (int, error) {
	return c.SendPrefixedDatagramsWait(ctx, nil, bs)
}

// SendPrefixedDatagramsWait is SendPrefixedDatagrams that waits for room
// as SendDatagramsWait does.
func (c *Conn) SendPrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error) {
	return c.queueDatagrams(ctx, prefix, bs, true, false)
}

// GivePrefixedDatagrams is SendPrefixedDatagrams without the copy of each
// bs[i]: the send queue takes the buffer itself, and bs[i] becomes in
// exchange an empty buffer the connection no longer uses (that of a
// datagram sent before; nil when none is spare). Whatever bs holds on
// return is the caller's: the buffers not taken (from bs[n] on, after a
// refusal) and those given back. A tunnel reads its device into buffers
// it hands over this way, so that each packet is copied once on its way
// out, into its QUIC packet.
func (c *Conn) GivePrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	return c.queueDatagrams(context.Background(), prefix, bs, false, true)
}

// GivePrefixedDatagramsWait is GivePrefixedDatagrams that waits for room
// as SendDatagramsWait does.
func (c *Conn) GivePrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error) {
	return c.queueDatagrams(ctx, prefix, bs, true, true)
}

// queueDatagrams queues bs after prefix, under one lock per run of room
// in the send queue and with one wake-up of the connection per run that
// queued any; wait waits for room while the queue is full, until ctx
// ends, where otherwise the queue drops its oldest. give hands the
// buffers over (GivePrefixedDatagrams) rather than have them copied.
func (c *Conn) queueDatagrams(ctx context.Context, prefix []byte, bs [][]byte, wait, give bool) (int, error) {
	sent := 0
	for sent < len(bs) {
		c.mu.Lock()
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return sent, err
		}
		end := len(bs)
		if wait {
			room := c.core.DatagramSendRoom()
			if room == 0 {
				roomMade := c.datagramRoom.wait()
				c.mu.Unlock()
				select {
				case <-roomMade:
				case <-c.closed:
				case <-ctx.Done():
					return sent, ctx.Err()
				}
				continue
			}
			end = min(sent+room, len(bs))
		}
		now := c.t.now()
		var err error
		first := sent
		if give {
			var n int
			n, err = c.core.GiveDatagrams(now, prefix, bs[sent:end])
			sent += n
		} else {
			for ; sent < end; sent++ {
				if err = c.core.SendPrefixedDatagram(now, prefix, bs[sent]); err != nil {
					break
				}
			}
		}
		err = c.mapDatagramErr(err)
		c.mu.Unlock()
		if sent > first {
			c.signal()
		}
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}

// mapDatagramErr turns the core's refusal of a datagram into the
// package's; c.mu is held.
func (c *Conn) mapDatagramErr(err error) error {
	var tooLarge *core.DatagramTooLargeError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, core.ErrDatagramsNotNegotiated):
		return ErrDatagramsNotNegotiated
	case errors.As(err, &tooLarge):
		return &DatagramTooLargeError{MaxDataLen: int64(tooLarge.MaxDataLen)}
	case errors.Is(err, core.ErrClosed):
		return c.closeErrLocked()
	}
	return err
}

// ReceiveDatagram returns the payload of the next DATAGRAM frame
// received, waiting for one until ctx ends. Datagrams received before
// the connection closed are returned first, then the connection's error.
func (c *Conn) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	var one [1][]byte
	got, err := c.ReceiveDatagrams(ctx, nil, one[:0])
	if len(got) == 0 {
		return nil, err
	}
	return got[0], nil
}

// ReceiveDatagrams gives back the buffers of done, datagrams this
// connection returned earlier that the caller no longer uses (it must not
// touch them afterwards), for datagrams to come; then it waits for a
// datagram as ReceiveDatagram does and appends it and those waiting
// behind it, up to cap(got) of them (at least one), to got. One call,
// one lock: how a reader keeps up with a tunnel's packet rate, and
// without an allocation per datagram once buffers circulate.
func (c *Conn) ReceiveDatagrams(ctx context.Context, done, got [][]byte) ([][]byte, error) {
	recycled := false
	for {
		c.mu.Lock()
		if !recycled {
			for _, b := range done {
				c.core.RecycleDatagram(b)
			}
			recycled = true
		}
		if !c.core.DatagramsEnabled() {
			c.mu.Unlock()
			return got, ErrDatagramsNotNegotiated
		}
		start, limit := len(got), max(cap(got), len(got)+1)
		for len(got) < limit {
			b, ok := c.core.ReceiveDatagram()
			if !ok {
				break
			}
			got = append(got, b)
		}
		if len(got) > start {
			c.mu.Unlock()
			return got, nil
		}
		if c.err != nil {
			err := c.err
			c.mu.Unlock()
			return got, err
		}
		wait := c.datagramReady.wait()
		c.mu.Unlock()
		select {
		case <-wait:
		case <-c.closed:
		case <-ctx.Done():
			return got, ctx.Err()
		}
	}
}

// RecycleDatagrams gives back the buffers of bs, datagrams this connection
// returned earlier that the caller no longer uses (it must not touch them
// afterwards), without waiting for new ones, as ReceiveDatagrams does
// with its done: for a reader that has more of them than it wants to hold
// until its next call. The connection keeps a few batches of them and
// puts the rest of a packet's size in a pool the process's connections
// share, so that the next burst reuses them rather than allocate.
func (c *Conn) RecycleDatagrams(bs [][]byte) {
	c.mu.Lock()
	for _, b := range bs {
		c.core.RecycleDatagram(b)
	}
	c.mu.Unlock()
}

// MaxDatagramPayloadSize is the largest payload SendDatagram takes now:
// what fits in a DATAGRAM frame of one packet of the path's current
// datagram size (which path MTU discovery raises) within the peer's
// max_datagram_frame_size; 0 when DATAGRAM frames are not negotiated.
// (ConnectionStats.MaxDatagramSize is the UDP payload size.)
func (c *Conn) MaxDatagramPayloadSize() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.core.MaxDatagramPayloadSize()
}

// datagramStats maps the core's counters.
func datagramStats(s *core.Stats) DatagramStats {
	d := s.Datagrams
	return DatagramStats{
		Queued: d.Queued, Sent: d.Sent, Lost: d.Lost, SendDropped: d.SendDropped,
		Received: d.Received, RebuiltByFEC: d.RebuiltByFEC, ReceiveDropped: d.ReceiveDropped,
	}
}
