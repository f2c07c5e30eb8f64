package connectip

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Lent packets. ReadPacket copies each IP packet out of the carrier's
// buffer into the reader's; a tunnel's end that writes the packets into
// its device anyway borrows them instead (LendPackets), in the buffers
// the carrier received them in when it lends those (HTTP/3's
// Stream.HoldDatagram), and gives them back after the device write
// (PacketBatch.Release): at 2 Gbit/s each copy of a packet on the way
// cost the receiving end a few percent of a core.

// lendBatch bounds the packets of a batch: what a device write joins.
const lendBatch = 64

// datagramLender is a Carrier that lends its received datagrams in its
// own buffers until they are given back (http3.Stream.HoldDatagram,
// TryHoldDatagram and ReleaseDatagrams).
type datagramLender interface {
	HoldDatagram(ctx context.Context) (payload, buf []byte, err error)
	TryHoldDatagram() (payload, buf []byte, ok bool)
	ReleaseDatagrams(bufs [][]byte)
}

// PacketBatch is IP packets from the peer that arrived together, lent by
// a session (LendPackets) until Release.
type PacketBatch struct {
	// Packets are the packets, in the order they arrived, checked and
	// counted as ReadPacket does. The reader may reslice it; Release
	// does not look at it.
	Packets [][]byte
	s       *Session
	pkts    [][]byte // Packets' storage
	// held are the carrier's buffers to give back (datagramLender); own
	// the batch's buffers over a carrier that copies, kept with it.
	held [][]byte
	own  [][]byte
}

// Release gives the batch's buffers back; the packets must not be used
// afterwards. A second Release does nothing.
func (b *PacketBatch) Release() {
	s := b.s
	if s == nil {
		return
	}
	b.s = nil
	if len(b.held) > 0 {
		if dl, ok := s.c.(datagramLender); ok {
			dl.ReleaseDatagrams(b.held)
		}
		clear(b.held)
		b.held = b.held[:0]
	}
	clear(b.pkts)
	b.pkts, b.Packets = b.pkts[:0], nil
	s.batches.Put(b)
}

// newBatch takes a batch from the session's pool.
func (s *Session) newBatch() *PacketBatch {
	b, _ := s.batches.Get().(*PacketBatch)
	if b == nil {
		b = &PacketBatch{pkts: make([][]byte, 0, lendBatch)}
	}
	b.s = s
	return b
}

// LendPackets waits for an IP packet from the peer and returns it with
// those that arrived with it (up to 64), lent until the batch's Release.
// Datagrams are checked, counted and dropped as ReadPacket does. Any
// error means the session has ended. Each batch must be released, from
// any goroutine; a session lends batches on one goroutine at a time.
// Over a carrier that does not lend, the packets are copied into buffers
// of the batch of the session's MTU, and a longer one is skipped.
func (s *Session) LendPackets() (*PacketBatch, error) {
	b := s.newBatch()
	var err error
	if dl, ok := s.c.(datagramLender); ok {
		err = s.holdFirst(dl, b)
	} else {
		err = s.copyFirst(b)
	}
	if err != nil {
		b.Release()
		return nil, err
	}
	s.lendMore(b)
	b.Packets = b.pkts
	return b, nil
}

// TryLendPackets is LendPackets without the wait: nil when no packet is
// waiting now (or the carrier cannot tell, as TryReadPacket).
func (s *Session) TryLendPackets() *PacketBatch {
	b := s.newBatch()
	s.lendMore(b)
	if len(b.pkts) == 0 {
		b.Release()
		return nil
	}
	b.Packets = b.pkts
	return b
}

// holdFirst waits for the first packet of b from a carrier that lends.
func (s *Session) holdFirst(dl datagramLender, b *PacketBatch) error {
	for {
		payload, buf, err := dl.HoldDatagram(s.ctx)
		if err != nil {
			return s.sessionErr(fmt.Errorf("connectip: receiving a datagram: %w", err))
		}
		if s.hold(b, payload, buf) {
			return nil
		}
	}
}

// hold adds to b the packet of a datagram lent in buf if it passes the
// checks (admit), and keeps buf to give back either way.
func (s *Session) hold(b *PacketBatch, payload, buf []byte) bool {
	b.held = append(b.held, buf)
	p, ok := s.admit(payload)
	if ok {
		s.stats.received.forwarded(len(p))
		b.pkts = append(b.pkts, p)
	}
	return ok
}

// copyFirst waits for the first packet of b from a carrier that does not
// lend, and copies it into a buffer of b's.
func (s *Session) copyFirst(b *PacketBatch) error {
	for {
		buf := b.ownBuffer(s.cfg.MTU)
		n, err := s.ReadPacket(buf)
		if errors.Is(err, io.ErrShortBuffer) {
			continue // longer than this end's MTU: no device takes it
		}
		if err != nil {
			return err
		}
		b.pkts = append(b.pkts, buf[:n])
		return nil
	}
}

// lendMore adds to b the packets waiting, up to lendBatch.
func (s *Session) lendMore(b *PacketBatch) {
	dl, lends := s.c.(datagramLender)
	for len(b.pkts) < lendBatch && len(b.held) < 2*lendBatch {
		if lends {
			payload, buf, ok := dl.TryHoldDatagram()
			if !ok {
				return
			}
			s.hold(b, payload, buf)
			continue
		}
		buf := b.ownBuffer(s.cfg.MTU)
		n, ok, err := s.TryReadPacket(buf)
		if !ok || err != nil && !errors.Is(err, io.ErrShortBuffer) {
			// A failure ends the session, which the next LendPackets
			// reports; what was read goes out first.
			return
		}
		if err == nil {
			b.pkts = append(b.pkts, buf[:n])
		}
	}
}

// ownBuffer returns the batch's buffer for its next packet, of size
// bytes, made on first use and kept with the batch.
func (b *PacketBatch) ownBuffer(size int) []byte {
	i := len(b.pkts)
	if i == len(b.own) {
		b.own = append(b.own, make([]byte, size))
	}
	if len(b.own[i]) < size {
		b.own[i] = make([]byte, size)
	}
	return b.own[i][:size]
}
