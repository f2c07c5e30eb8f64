package netsim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/satquic/satquic/netsim/loss"
)

// Delivery is a packet leaving the link.
type Delivery struct {
	Data []byte
	At   time.Duration // when the packet was due out (at or before Deliver's now)
	CE   bool          // the queue marked it Congestion Experienced
	Tag  uint64        // the tag given to OfferTagged (0 for Offer)
}

// Link is one direction of a link: a drop-tail queue in front of a
// serializer, followed by propagation delay. It is a pure state machine: the
// caller passes the time to every call, and the link never reads a clock.
// A Link is not safe for concurrent use.
type Link struct {
	cfg        LinkConfig
	loss       loss.Model
	rng        *rand.Rand
	ser        serializer
	queueBytes int // effective drop-tail byte limit; 0 = none

	waiting      ring[waitingPacket] // admitted packets the serializer has not started
	backlogBytes int

	fifo    ring[inFlight] // used when order is preserved: due times never decrease
	reorder dueHeap        // used when Reorder is set

	lastNow time.Duration
	lastDue time.Duration
	seq     uint64

	stats      LinkStats
	queueDelay histogram
}

// waitingPacket is what the queue limit needs to know of a queued packet.
type waitingPacket struct {
	start time.Duration
	size  int
}

// lossSeedSalt separates the loss model's random stream from the link's
// own (jitter, duplication, corruption), so enabling jitter does not change
// which packets are lost.
const lossSeedSalt = 0x6c6f73735f6d6f64

// NewLink validates cfg and returns a link with an empty queue.
func NewLink(cfg LinkConfig) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.clone()
	model, err := loss.Parse(cfg.Loss, cfg.Seed^lossSeedSalt)
	if err != nil {
		return nil, fmt.Errorf("link config: %w", err)
	}
	l := &Link{
		cfg:        cfg,
		loss:       model,
		rng:        rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		queueBytes: cfg.EffectiveQueueBytes(),
	}
	if cfg.Trace != nil {
		l.ser = newTraceSerializer(cfg.Trace)
	} else {
		l.ser = newRateSerializer(cfg.RateBps, cfg.RateSchedule)
	}
	return l, nil
}

// Config returns the link's configuration.
func (l *Link) Config() LinkConfig { return l.cfg.clone() }

// Offer puts a packet on the link at now; the link owns p from then on (it
// may corrupt it in place and hands it back in a Delivery). Times must not
// decrease from one call to the next; an earlier time is treated as the
// latest one seen and counted in Stats().TimeRegressions.
//
// The steps follow netem's order: MTU check, duplicate, then for each copy
// outage and loss, corrupt, queue limit (and ECN mark), serialization,
// delay and jitter.
func (l *Link) Offer(now time.Duration, p []byte) {
	l.OfferTagged(now, p, 0)
}

// OfferTagged is Offer with an opaque tag that travels with the packet (and
// its duplicate) and comes back in Delivery.Tag. The simulator uses it to
// carry addresses without touching the packet's bytes.
func (l *Link) OfferTagged(now time.Duration, p []byte, tag uint64) {
	if now < l.lastNow {
		l.stats.TimeRegressions++
		now = l.lastNow
	}
	l.lastNow = now
	l.stats.Offered++
	l.stats.OfferedBytes += int64(len(p))
	if l.cfg.MTU > 0 && len(p) > l.cfg.MTU {
		l.stats.DroppedMTU++
		return
	}
	var clone []byte
	if l.cfg.Duplicate > 0 && l.rng.Float64() < l.cfg.Duplicate {
		// The copy needs its own buffer: the receiver may reuse or change
		// the first one, and corruption must hit one copy only.
		clone = slices.Clone(p)
		l.stats.Duplicated++
	}
	l.admit(now, p, tag)
	if clone != nil {
		l.admit(now, clone, tag)
	}
}

// admit takes one copy of a packet through loss, corruption, the queue and
// the serializer.
func (l *Link) admit(now time.Duration, p []byte, tag uint64) {
	if len(l.cfg.Outages) > 0 && linkDown(l.cfg.Outages, now) {
		l.stats.DroppedOutage++
		return
	}
	if l.loss.Drop() {
		l.stats.DroppedLoss++
		return
	}
	if l.cfg.Corrupt > 0 && l.rng.Float64() < l.cfg.Corrupt {
		l.corrupt(p)
	}
	l.drainWaiting(now)
	start := l.ser.start(now)
	waits := start > now
	if waits && l.queueFull(len(p)) {
		l.stats.DroppedQueue++
		return
	}
	ce := l.cfg.ECNThreshold > 0 && l.backlogBytes > l.cfg.ECNThreshold
	if ce {
		l.stats.CEMarked++
	}
	end := l.ser.commit(start, len(p))
	if waits {
		l.waiting.push(waitingPacket{start: start, size: len(p)})
		l.backlogBytes += len(p)
		l.stats.MaxQueueBytes = max(l.stats.MaxQueueBytes, l.backlogBytes)
	}
	l.queueDelay.record(start - now)
	l.enqueue(inFlight{data: p, due: l.arrival(end), tag: tag, ce: ce})
}

// corrupt replaces one byte, chosen in the corruption region, with a
// different value.
func (l *Link) corrupt(p []byte) {
	region := len(p)
	if l.cfg.CorruptRegion > 0 {
		region = min(region, l.cfg.CorruptRegion)
	}
	if region == 0 {
		return
	}
	p[l.rng.IntN(region)] ^= byte(1 + l.rng.IntN(255))
	l.stats.Corrupted++
}

// drainWaiting forgets the queued packets the serializer has started by now.
func (l *Link) drainWaiting(now time.Duration) {
	for l.waiting.len() > 0 && l.waiting.peek().start <= now {
		l.backlogBytes -= l.waiting.pop().size
	}
}

// queueFull reports whether a packet of size bytes would overflow the
// drop-tail queue. The packet being serialized has left the queue, as in a
// Linux qdisc or an ns-3 device queue.
func (l *Link) queueFull(size int) bool {
	if l.cfg.QueuePackets > 0 && l.waiting.len()+1 > l.cfg.QueuePackets {
		return true
	}
	return l.queueBytes > 0 && l.backlogBytes+size > l.queueBytes
}

// arrival is when a packet whose last bit left at end reaches the far side:
// end plus the delay in force at end, plus jitter. Unless reordering is
// allowed, a packet never arrives before the one sent ahead of it, even when
// jitter or a delay step would let it.
func (l *Link) arrival(end time.Duration) time.Duration {
	delay := l.cfg.Delay
	if len(l.cfg.DelaySteps) > 0 {
		delay = delayAt(delay, l.cfg.DelaySteps, end)
	}
	if j := l.cfg.Jitter; j > 0 {
		delay += time.Duration(l.rng.Int64N(int64(2*j)+1)) - j
		delay = max(delay, 0)
	}
	due := end + delay
	if !l.cfg.Reorder {
		due = max(due, l.lastDue)
		l.lastDue = due
	}
	return due
}

func (l *Link) enqueue(p inFlight) {
	p.seq = l.seq
	l.seq++
	l.stats.InFlight++
	if l.cfg.Reorder {
		l.reorder.push(p)
	} else {
		l.fifo.push(p)
	}
}

// Next returns the earliest time a packet is due out, if any is in flight.
func (l *Link) Next() (at time.Duration, ok bool) {
	if p := l.head(); p != nil {
		return p.due, true
	}
	return 0, false
}

func (l *Link) head() *inFlight {
	if l.cfg.Reorder {
		if l.reorder.len() == 0 {
			return nil
		}
		return l.reorder.peek()
	}
	if l.fifo.len() == 0 {
		return nil
	}
	return l.fifo.peek()
}

// Deliver returns the next packet due at or before now, in due order (equal
// times in the order they were admitted).
func (l *Link) Deliver(now time.Duration) (d Delivery, ok bool) {
	p := l.head()
	if p == nil || p.due > now {
		return Delivery{}, false
	}
	var out inFlight
	if l.cfg.Reorder {
		out = l.reorder.pop()
	} else {
		out = l.fifo.pop()
	}
	l.stats.InFlight--
	l.stats.Delivered++
	l.stats.DeliveredBytes += int64(len(out.data))
	return Delivery{Data: out.data, At: out.due, CE: out.ce, Tag: out.tag}, true
}

// Backlog returns the packets and bytes waiting for the serializer at the
// time of the last Offer.
func (l *Link) Backlog() (packets, bytes int) {
	return l.waiting.len(), l.backlogBytes
}

// QueueLimitBytes is the drop-tail byte limit in force (0 = none).
func (l *Link) QueueLimitBytes() int { return l.queueBytes }

// DropCounts returns the packets dropped so far by the loss model, an
// outage and the full queue: Stats' counters, without the cost of its
// quantiles, for a caller that checks them after every packet.
func (l *Link) DropCounts() (loss, outage, queue int64) {
	return l.stats.DroppedLoss, l.stats.DroppedOutage, l.stats.DroppedQueue
}

// Stats returns the counters and the queue delay percentiles so far.
func (l *Link) Stats() LinkStats {
	s := l.stats
	s.QueueDelayP50 = l.queueDelay.quantile(0.50)
	s.QueueDelayP99 = l.queueDelay.quantile(0.99)
	s.QueueDelayMax = l.queueDelay.max
	return s
}
