package gateway

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/satquic/satquic/tunnel/tunneltest"
)

// A bulk transfer through the tunnel for the rebinding test, over the
// in-memory devices: a sender at the server's end and a receiver at the
// client's exchange IPv4/UDP packets, the data numbered and the receiver's
// cumulative acknowledgements going back, with go-back-N retransmission
// (on three duplicate acknowledgements or a timeout) and a window that
// grows and halves, as a simple TCP-like transport would. So the transfer completes only if nothing the tunnel
// lost stays lost, and the receiver times every arrival.

const (
	bulkPacketSize = 1200 // IP packet size of the data
	bulkPayload    = bulkPacketSize - ipv4HeaderLen - udpHeaderLen
	bulkSeqLen     = 8
	// bulkWindow bounds the packets in flight: below the device queue of
	// the server's forwarder and the connection's datagram queue (1024
	// each), so that nothing is dropped before the link. The window
	// starts at bulkInitialWindow and falls to no less than
	// bulkMinWindow.
	bulkWindow        = 512
	bulkInitialWindow = 32
	bulkMinWindow     = 8
	bulkAckEvery      = 8
	// bulkRTO is the sender's retransmission timeout, well above the
	// path's round trip.
	bulkRTO                   = 500 * time.Millisecond
	bulkDataPort, bulkAckPort = 9000, 9001
	// A heartbeat, a small packet every bulkBeatEvery to bulkBeatPort
	// beside the flow, times the tunnel whatever the flow's window does.
	bulkBeatPort                 = 9002
	bulkBeatEvery                = time.Millisecond
	bulkDupAcksForFastRetransmit = 3
	bulkPayloadPatternMultiplier = 7
)

// bulkData is data packet seq from src to dst: its number, then bytes
// that depend on the number and the offset, so that any change shows.
func bulkData(src, dst netip.Addr, seq int) []byte {
	payload := make([]byte, bulkPayload)
	binary.BigEndian.PutUint64(payload, uint64(seq))
	for i := bulkSeqLen; i < len(payload); i++ {
		payload[i] = byte(seq + i*bulkPayloadPatternMultiplier)
	}
	return ipv4UDP(src, dst, bulkDataPort, bulkAckPort, payload)
}

// bulkAck acknowledges every data packet below next.
func bulkAck(src, dst netip.Addr, next int) []byte {
	var b [bulkSeqLen]byte
	binary.BigEndian.PutUint64(b[:], uint64(next))
	return ipv4UDP(src, dst, bulkAckPort, bulkDataPort, b[:])
}

// udpPayload checks the IPv4/UDP packet p, as ipv4UDP builds it and a
// router forwards it, and returns its UDP payload.
func udpPayload(p []byte) ([]byte, error) {
	if len(p) < ipv4HeaderLen+udpHeaderLen || p[0] != 0x45 || p[9] != protoUDP {
		return nil, errors.New("not an IPv4/UDP packet")
	}
	if int(binary.BigEndian.Uint16(p[2:4])) != len(p) || onesSum(p[:ipv4HeaderLen], 0) != 0xffff {
		return nil, errors.New("a bad IPv4 header")
	}
	src, dst := netip.AddrFrom4([4]byte(p[12:16])), netip.AddrFrom4([4]byte(p[16:20]))
	u := p[ipv4HeaderLen:]
	if onesSum(u, udpPseudoSum(src, dst, len(u))) != 0xffff {
		return nil, errors.New("a bad UDP checksum")
	}
	return u[udpHeaderLen:], nil
}

// parseBulkData returns the number of data packet p after checking its
// content.
func parseBulkData(p []byte) (int, error) {
	payload, err := udpPayload(p)
	if err != nil {
		return 0, err
	}
	if len(payload) != bulkPayload {
		return 0, fmt.Errorf("a data packet of %d bytes", len(p))
	}
	seq := int(binary.BigEndian.Uint64(payload))
	for i := bulkSeqLen; i < len(payload); i++ {
		if payload[i] != byte(seq+i*bulkPayloadPatternMultiplier) {
			return 0, fmt.Errorf("data packet %d changed at byte %d", seq, i)
		}
	}
	return seq, nil
}

// bulkSender sends packets data packets into dev (the server's end) and
// takes the acknowledgements dev's tunnel delivers.
type bulkSender struct {
	dev      *tunneltest.Device
	src, dst netip.Addr
	packets  int

	// Sent counts the data packets sent, Retransmitted those of them
	// that were sent again (go-back-N sends again all that followed a
	// loss).
	Sent, Retransmitted int
	// TooBig counts the ICMP errors the tunnel answered data packets
	// with (Fragmentation Needed while its path was smaller than they
	// are, after a black hole fallback): the sender keeps its size, and
	// what they dropped is sent again as any loss is.
	TooBig int
}

func (s *bulkSender) run(ctx context.Context) error {
	base, next, highest := 0, 0, 0
	recover, dups := 0, 0
	// The window grows and halves as TCP's does (RFC 5681), so that the
	// flow backs off when the tunnel or the receiver drops packets.
	cwnd, ssthresh := float64(bulkInitialWindow), float64(bulkWindow)
	rto := time.NewTimer(bulkRTO)
	defer rto.Stop()
	for base < s.packets {
		for next < s.packets && next-base < min(int(cwnd), bulkWindow) {
			select {
			case s.dev.Inject <- bulkData(s.src, s.dst, next):
			case <-ctx.Done():
				return fmt.Errorf("sender at %d of %d packets acknowledged: %w", base, s.packets, ctx.Err())
			}
			s.Sent++
			if next < highest {
				s.Retransmitted++
			}
			next++
			highest = max(highest, next)
		}
		select {
		case p := <-s.dev.Written:
			if isICMPv4(p) {
				s.TooBig++
				continue
			}
			ack, err := parseBulkAck(p)
			if err != nil {
				return err
			}
			switch {
			case ack > base:
				acked := float64(ack - base)
				base, dups = ack, 0
				next = max(next, base)
				if cwnd < ssthresh {
					cwnd += acked
				} else {
					cwnd += acked / cwnd
				}
				cwnd = min(cwnd, bulkWindow)
				rto.Reset(bulkRTO)
			case ack == base && next > base:
				// Go back once per loss: the duplicates the
				// retransmitted packets cause are not a new loss.
				if dups++; dups == bulkDupAcksForFastRetransmit && base >= recover {
					recover, next = next, base
					ssthresh = max(cwnd/2, bulkMinWindow)
					cwnd = ssthresh
				}
			}
		case <-rto.C:
			recover, next, dups = next, base, 0
			ssthresh, cwnd = max(cwnd/2, bulkMinWindow), bulkMinWindow
			rto.Reset(bulkRTO)
		case <-ctx.Done():
			return fmt.Errorf("sender at %d of %d packets acknowledged: %w", base, s.packets, ctx.Err())
		}
	}
	return nil
}

// isICMPv4 reports whether p is an IPv4 packet of ICMP.
func isICMPv4(p []byte) bool {
	return len(p) >= ipv4HeaderLen && p[0]>>4 == 4 && p[9] == protoICMP
}

// parseBulkAck returns what the acknowledgement p acknowledges.
func parseBulkAck(p []byte) (int, error) {
	payload, err := udpPayload(p)
	if err != nil {
		return 0, err
	}
	if len(payload) != bulkSeqLen {
		return 0, fmt.Errorf("an acknowledgement of %d bytes", len(p))
	}
	return int(binary.BigEndian.Uint64(payload)), nil
}

// bulkReceiver takes the data packets dev (the client's end) delivers, in
// order, and acknowledges them. At half the transfer it calls onHalf, and
// from then on it records when each packet arrives.
type bulkReceiver struct {
	dev      *tunneltest.Device
	src, dst netip.Addr
	packets  int
	onHalf   func() error

	// Next is the number of data packets received in order; Arrived
	// counts every data packet that arrived.
	Next, Arrived int
	// OutOfOrder counts data packets that came after a gap (dropped, as
	// a go-back-N receiver does).
	OutOfOrder int
	// HalfAt is when half the data had arrived; ArrivalsAfter are the
	// times of every data packet's arrival from then on, BeatsAfter those
	// of the heartbeats.
	HalfAt                    time.Time
	ArrivalsAfter, BeatsAfter []time.Time
	// LongestInOrderGap is the longest time without a packet in order
	// after HalfAt: the stall the application sees, the tunnel's and the
	// retransmission of what it lost.
	LongestInOrderGap time.Duration
	// Start and End are the first and the last arrival.
	Start, End time.Time
}

func (r *bulkReceiver) run(ctx context.Context) error {
	var last, lastInOrder time.Time
	for r.Next < r.packets {
		var p []byte
		select {
		case p = <-r.dev.Written:
		case <-ctx.Done():
			return fmt.Errorf("the transfer stopped at packet %d of %d (half at %v, last arrival at %v): %w",
				r.Next, r.packets, r.HalfAt, last, ctx.Err())
		}
		now := time.Now()
		if isBeat(p) {
			if !r.HalfAt.IsZero() {
				r.BeatsAfter = append(r.BeatsAfter, now)
			}
			continue
		}
		if r.Start.IsZero() {
			r.Start = now
		}
		if !r.HalfAt.IsZero() {
			r.ArrivalsAfter = append(r.ArrivalsAfter, now)
		}
		last = now
		seq, err := parseBulkData(p)
		if err != nil {
			return err
		}
		r.Arrived++
		if seq != r.Next {
			r.OutOfOrder++
			r.ack(ctx)
			continue
		}
		if !r.HalfAt.IsZero() {
			r.LongestInOrderGap = max(r.LongestInOrderGap, now.Sub(lastInOrder))
		}
		lastInOrder = now
		r.Next++
		if r.Next%bulkAckEvery == 0 || r.Next == r.packets {
			r.ack(ctx)
		}
		if r.Next == r.packets/2 {
			r.HalfAt = now
			r.ArrivalsAfter = append(r.ArrivalsAfter, now)
			if err := r.onHalf(); err != nil {
				return err
			}
		}
	}
	r.End = last
	return nil
}

func (r *bulkReceiver) ack(ctx context.Context) {
	select {
	case r.dev.Inject <- bulkAck(r.src, r.dst, r.Next):
	case <-ctx.Done():
	}
}

// longestSpan is the longest time between two of the sorted times with at
// most trickle others between them: with 0, the longest gap; with a few,
// the longest time in which next to nothing arrived.
func longestSpan(times []time.Time, trickle int) (time.Duration, time.Time) {
	var longest time.Duration
	var end time.Time
	for i := 0; i+trickle+1 < len(times); i++ {
		if d := times[i+trickle+1].Sub(times[i]); d > longest {
			longest, end = d, times[i+trickle+1]
		}
	}
	return longest, end
}

// isBeat reports whether p is a heartbeat.
func isBeat(p []byte) bool {
	return len(p) >= ipv4HeaderLen+udpHeaderLen && binary.BigEndian.Uint16(p[ipv4HeaderLen+2:]) == bulkBeatPort
}

// beat puts a heartbeat from src to dst into dev every bulkBeatEvery
// until ctx is done.
func beat(ctx context.Context, dev *tunneltest.Device, src, dst netip.Addr) {
	tick := time.NewTicker(bulkBeatEvery)
	defer tick.Stop()
	for n := uint64(0); ; n++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], n)
		select {
		case dev.Inject <- ipv4UDP(src, dst, bulkDataPort, bulkBeatPort, b[:]):
		case <-ctx.Done():
			return
		}
	}
}
