package recovery

import (
	"math/bits"
	"time"
)

// Pacer is a token bucket (RFC 9002 section 7.7's "leaky bucket"): tokens,
// in bytes, accrue at the pacing rate up to a burst capacity, and a packet
// may leave when the bucket holds its size. Accrual is exact integer
// arithmetic (the remainder of rate x elapsed is kept), so the long-run
// rate is exact at any speed. The capacity (Capacity) is what makes the
// rate hold on a real machine: a sender whose timer fires late sends the
// tokens earned meanwhile when it wakes, as long as the bucket could hold
// them, so the capacity grows with the rate to cover the timer lateness
// (PacingConfig.BurstTime), and at rates where packets are microseconds
// apart the sender sends a burst each time its timer fires instead of one
// packet.
//
// The zero Pacer is empty and has never refilled; it starts full at the
// first call.
type Pacer struct {
	tokens  int64
	frac    uint64 // rate x nanoseconds not yet worth a byte, < 1e9
	last    time.Duration
	started bool
}

const nanosPerSecond = uint64(time.Second)

// Capacity is the bucket size for a rate in bytes per second: the larger of
// burstPackets datagrams (the initial window, the burst RFC 9002 section
// 7.7 allows any sender) and rate x burstTime (the timer lateness to
// absorb), never more than window, never less than one datagram.
func Capacity(rate uint64, burstPackets, mds int, burstTime time.Duration, window int) int64 {
	c := int64(burstPackets) * int64(mds)
	if burstTime > 0 {
		c = max(c, int64(min(mulDivSat(rate, uint64(burstTime), nanosPerSecond), 1<<50)))
	}
	return max(min(c, int64(window)), int64(mds))
}

// refill adds the tokens earned since the last call.
func (p *Pacer) refill(now time.Duration, rate uint64, capacity int64) {
	if !p.started {
		p.started, p.last, p.tokens = true, now, capacity
		return
	}
	elapsed := now - p.last
	if elapsed <= 0 {
		return
	}
	p.last = now
	if p.tokens >= capacity || rate == 0 {
		p.tokens, p.frac = min(p.tokens, capacity), 0
		return
	}
	hi, lo := bits.Mul64(rate, uint64(elapsed))
	lo, carry := bits.Add64(lo, p.frac, 0)
	hi += carry
	need := uint64(capacity - p.tokens)
	if hi >= nanosPerSecond {
		p.tokens, p.frac = capacity, 0
		return
	}
	q, r := bits.Div64(hi, lo, nanosPerSecond)
	if q >= need {
		p.tokens, p.frac = capacity, 0
		return
	}
	p.tokens += int64(q)
	p.frac = r
}

// NextSendTime is when a packet of size bytes may leave: now if the bucket
// holds it, otherwise the moment it will. The core arms its timer to it.
// A rate of zero disables pacing.
func (p *Pacer) NextSendTime(now time.Duration, size int, rate uint64, capacity int64) time.Duration {
	p.refill(now, rate, capacity)
	if rate == 0 || p.tokens >= int64(size) || p.tokens >= capacity {
		return now
	}
	need := uint64(int64(size) - p.tokens)
	// Wait until rate x wait + frac >= need x 1e9, rounding up.
	hi, lo := bits.Mul64(need, nanosPerSecond)
	lo, borrow := bits.Sub64(lo, p.frac, 0)
	hi -= borrow
	if hi >= rate {
		return now + time.Duration(1<<62)
	}
	q, r := bits.Div64(hi, lo, rate)
	if r != 0 {
		q++
	}
	return now + time.Duration(q)
}

// OnSent takes a packet's size from the bucket. The bucket may go into
// debt (a probe or an unpaced packet); the debt is bounded by one
// capacity so that a long burst of probes cannot silence the sender.
func (p *Pacer) OnSent(now time.Duration, size int, rate uint64, capacity int64) {
	p.refill(now, rate, capacity)
	p.tokens = max(p.tokens-int64(size), -capacity)
}
