package netsim

import (
	"math"
	"time"
)

// serializer models the transmitter at the head of the link's queue. It is
// asked when a packet offered at now would start to go out, and then, if the
// packet is admitted, commits it and returns when its last bit leaves.
// Offered times never decrease, so both implementations only move forward.
type serializer interface {
	start(now time.Duration) time.Duration
	commit(start time.Duration, size int) time.Duration
}

// rateSerializer transmits at a fixed rate that a schedule may change. A
// packet is serialized entirely at the rate in force when it starts.
type rateSerializer struct {
	rate     float64 // bit/s; 0 = infinite
	steps    []RateStep
	nextStep int           // first step not yet in force
	free     time.Duration // when the last committed packet finished
	carry    float64       // fraction of a nanosecond owed by back-to-back packets
}

func newRateSerializer(rate float64, steps []RateStep) *rateSerializer {
	return &rateSerializer{rate: rate, steps: steps}
}

func (s *rateSerializer) start(now time.Duration) time.Duration {
	return max(now, s.free)
}

func (s *rateSerializer) commit(start time.Duration, size int) time.Duration {
	for s.nextStep < len(s.steps) && s.steps[s.nextStep].At <= start {
		s.rate = s.steps[s.nextStep].RateBps
		s.nextStep++
	}
	if start > s.free {
		s.carry = 0 // an idle serializer owes nothing
	}
	end := start
	if s.rate > 0 {
		// Keep the sub-nanosecond remainder so that a long back-to-back
		// train runs at exactly the configured rate.
		ns := float64(size)*8e9/s.rate + s.carry
		whole := math.Floor(ns)
		s.carry = ns - whole
		end += time.Duration(whole)
	}
	s.free = end
	return end
}

// traceSerializer sends bytes only at the delivery opportunities of a
// Mahimahi trace, 1500 bytes per opportunity.
type traceSerializer struct {
	trace   *DeliveryTrace
	cur     traceCursor // opportunity in use
	left    int         // bytes still free in cur
	started bool
}

func newTraceSerializer(t *DeliveryTrace) *traceSerializer {
	return &traceSerializer{trace: t}
}

// start moves to the opportunity that will carry the packet's first byte:
// the current one if it has room and has not passed, else the first one not
// before now.
func (s *traceSerializer) start(now time.Duration) time.Duration {
	t := s.trace
	switch {
	case !s.started:
		s.cur, s.left, s.started = t.firstAtOrAfter(now), mahimahiOpportunityBytes, true
	case t.at(s.cur) < now:
		s.cur, s.left = t.firstAtOrAfter(now), mahimahiOpportunityBytes
	case s.left == 0:
		s.cur, s.left = t.next(s.cur), mahimahiOpportunityBytes
	}
	return t.at(s.cur)
}

func (s *traceSerializer) commit(_ time.Duration, size int) time.Duration {
	for {
		take := min(size, s.left)
		s.left -= take
		size -= take
		if size == 0 {
			return s.trace.at(s.cur)
		}
		s.cur, s.left = s.trace.next(s.cur), mahimahiOpportunityBytes
	}
}
