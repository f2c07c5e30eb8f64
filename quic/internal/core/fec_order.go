package core

import (
	"slices"
	"time"
)

// In-order delivery of the DATAGRAM frames of FEC source packets. A packet
// FEC rebuilds is processed when the repair that rebuilds it arrives,
// after the source packets sent behind it: without more, the application
// receives its datagrams after theirs. A tunnel's inner TCP reads that as
// reordering, and Linux's RACK (RFC 8985 section 6.2) marks the late
// segment lost once it is later than a quarter of its minimum RTT: a
// spurious retransmission and a congestion window reduction for every
// loss the tunnel repaired. So the receiver holds the datagrams of source
// packets that arrive behind a missing source until the missing one
// arrives or is rebuilt, and releases them in sequence order; a gap not
// filled within the hold (DatagramHold, by default about the time a
// repair that the sender's loss detection calls for takes: a smoothed RTT
// plus four variations, fec_lossrepair.go) is given up and the datagrams
// behind it go on. The hold never keeps more datagrams than the decoder's
// window of sources, nor waits for a source the decoder can no longer
// rebuild. Stream frames are not held: streams reassemble by offset.

// fecOrderGranularity is the shortest hold derived from the RTT: the
// timer granularity of RFC 9002 section 6.1.2, below which a repair's
// arrival cannot be told from the jitter of the timers.
const fecOrderGranularity = time.Millisecond

// orderMaxRepairableGap is the longest run of missing sources datagrams
// wait for: the most repairs a sender gives sources it knows lost at once
// (its allowance saved up and the debt it may run, fec_lossrepair.go).
// A longer run, such as the packets sent to a client's old address
// before a NAT rebinding was noticed, is not rebuilt by them (fewer
// equations than unknowns); waiting for it would only add the hold to
// every datagram behind it.
const orderMaxRepairableGap = lossRepairMaxDebt + fecMaxCredit

// orderGap is a run [lo, hi) of source sequence numbers found missing at
// once, and when the datagrams behind it stop waiting for it.
type orderGap struct {
	lo, hi   uint64
	deadline time.Duration
}

// heldDatagram is a datagram waiting behind a gap, with the sequence
// number of the source packet that carried it.
type heldDatagram struct {
	seq  uint64
	data []byte
}

// datagramOrder tracks the peer's source sequence numbers and the
// datagrams held behind missing ones.
type datagramOrder struct {
	// window bounds the sources between the first missing one and the
	// newest (the decoder rebuilds no older one) and the datagrams held.
	window  uint64
	started bool
	// frontier is the lowest sequence number neither received, rebuilt
	// nor given up; next is one past the highest seen.
	frontier, next uint64
	// arrived holds the sequence numbers at or above frontier that were
	// received or rebuilt.
	arrived rangeSet
	// gaps are the runs found missing, ascending, each with its deadline.
	gaps ring[orderGap]
	// held is sorted by sequence number.
	held []heldDatagram
	// cur is the sequence number of the source packet whose frames are
	// being processed, if curOK.
	cur   uint64
	curOK bool
	// reordered counts the datagrams that were held, givenUp the
	// sources given up as missing while datagrams waited.
	reordered, givenUp uint64
}

// onSource records that the source packet seq was received or rebuilt at
// now, and makes it the packet whose frames are processed next; a run of
// sources found missing by it waits at most hold.
func (o *datagramOrder) onSource(now time.Duration, seq uint64, hold time.Duration) {
	o.cur, o.curOK = seq, true
	if !o.started {
		o.started, o.frontier, o.next = true, seq, seq
	}
	switch {
	case seq < o.frontier:
		// Late, after its gap was given up, or a duplicate.
	case seq == o.frontier && o.arrived.empty() && o.gaps.len() == 0:
		// In order, nothing missing: the common case.
		o.frontier++
		o.next = max(o.next, o.frontier)
	default:
		if seq > o.next {
			deadline := now + hold
			if seq-o.next > orderMaxRepairableGap {
				deadline = now // nothing will rebuild it: do not wait
			}
			o.gaps.pushBack(orderGap{lo: o.next, hi: seq, deadline: deadline})
		}
		o.next = max(o.next, seq+1)
		o.arrived.add(seq, seq+1)
		o.advance()
	}
	// Gaps are given up on time even while no datagram waits, so that
	// sources never rebuilt (stream data, sent again in new packets) do
	// not pile up.
	o.expire(now)
}

// advance moves the frontier over the sources received, and forgets the
// gaps below it.
func (o *datagramOrder) advance() {
	o.arrived.removeBelow(o.frontier)
	for !o.arrived.empty() && o.arrived.first().lo == o.frontier {
		o.frontier = o.arrived.first().hi
		o.arrived.dropLowest()
	}
	for o.gaps.len() > 0 && o.gaps.at(0).hi <= o.frontier {
		o.gaps.popFront()
	}
}

// holds reports whether a datagram of the packet being processed must
// wait: its source is above the frontier, so a source before it is
// missing, or datagrams of sources before it wait for their release.
func (o *datagramOrder) holds() bool {
	return o.curOK && (o.cur > o.frontier || (len(o.held) > 0 && o.held[0].seq < o.cur))
}

// hold keeps data, a datagram of the packet being processed that it now
// owns, in sequence order.
func (o *datagramOrder) hold(data []byte) {
	i := len(o.held)
	for i > 0 && o.held[i-1].seq > o.cur {
		i--
	}
	o.held = slices.Insert(o.held, i, heldDatagram{seq: o.cur, data: data})
	o.reordered++
}

// expire gives up the gaps whose deadline passed at now, those older than
// the window, and the lowest ones while more datagrams wait than the
// window holds.
func (o *datagramOrder) expire(now time.Duration) {
	for o.gaps.len() > 0 {
		g := o.gaps.at(0)
		if now < g.deadline && o.next-o.frontier <= o.window && uint64(len(o.held)) <= o.window {
			return
		}
		if len(o.held) > 0 {
			o.givenUp += g.hi - max(g.lo, o.frontier) - o.arrivedIn(max(g.lo, o.frontier), g.hi)
		}
		o.frontier = max(o.frontier, g.hi)
		o.gaps.popFront()
		o.advance()
	}
}

// arrivedIn counts the sequence numbers of [lo, hi) received or rebuilt.
func (o *datagramOrder) arrivedIn(lo, hi uint64) uint64 {
	var n uint64
	for _, sp := range o.arrived.s {
		if sp.lo >= hi {
			break
		}
		n += min(sp.hi, hi) - max(sp.lo, lo)
	}
	return n
}

// release ends the processing of a packet's frames, gives up what is due
// at now, and hands deliver the held datagrams no missing source precedes
// any more, in order; deliver keeps them (they are copies).
func (o *datagramOrder) release(now time.Duration, deliver func([]byte)) {
	o.curOK = false
	if len(o.held) == 0 {
		return
	}
	o.expire(now)
	n := 0
	for n < len(o.held) && o.held[n].seq < o.frontier {
		deliver(o.held[n].data)
		n++
	}
	if n > 0 {
		clear(o.held[:n])
		o.held = append(o.held[:0], o.held[n:]...)
	}
}

// timer returns when the lowest gap is given up, while datagrams wait.
func (o *datagramOrder) timer() (time.Duration, bool) {
	if len(o.held) == 0 || o.gaps.len() == 0 {
		return 0, false
	}
	return o.gaps.at(0).deadline, true
}

// datagramHold is how long datagrams wait for a missing source found at
// now: Config.FEC.DatagramHold, or about the time until the repair that
// the sender's loss detection calls for arrives.
func (c *Conn) datagramHold() time.Duration {
	if h := c.fec.cfg.DatagramHold; h > 0 {
		return h
	}
	rtt := c.sender.RTT()
	return rtt.SmoothedRTT() + max(4*rtt.RTTVar(), fecOrderGranularity)
}

// onSourceOrder records the arrival or rebuild of source seq for the
// in-order delivery of datagrams.
func (c *Conn) onSourceOrder(now time.Duration, seq uint64) {
	if c.fec.cfg.NoDatagramOrder {
		return
	}
	c.fec.recv.order.onSource(now, seq, c.datagramHold())
}

// holdDatagram keeps a copy of data, a DATAGRAM frame's payload, if a
// source before its packet is missing, and reports whether it did. The
// copy goes into a buffer the application gave back or a pooled block,
// as a datagram delivered at once does (datagramState.takeRecvBuffer):
// at 1% loss a tunnel's receiving end holds a sixth of what it receives,
// and a fresh allocation for each cost more than the copy.
func (c *Conn) holdDatagram(data []byte) bool {
	if c.fec == nil || !c.fec.recv.order.holds() {
		return false
	}
	c.fec.recv.order.hold(append(c.dgram.takeRecvBuffer(len(data)), data...))
	return true
}

// releaseDatagrams ends the processing of a packet's frames and delivers
// the held datagrams whose turn came at now.
func (c *Conn) releaseDatagrams(now time.Duration) {
	if c.fec == nil {
		return
	}
	c.fec.recv.order.release(now, c.deliverOwnDatagram)
}

// datagramOrderTimer returns when held datagrams stop waiting for the
// lowest missing source.
func (c *Conn) datagramOrderTimer() (time.Duration, bool) {
	if c.fec == nil {
		return 0, false
	}
	return c.fec.recv.order.timer()
}
