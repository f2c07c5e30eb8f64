package netsim

import (
	"fmt"
	"net/netip"
	"time"
)

// Run processes every event up to and including until, then sets the clock
// to until.
func (n *Network) Run(until time.Duration) error {
	for n.queue.len() > 0 && n.queue.peek().at <= until {
		if err := n.step(); err != nil {
			return err
		}
	}
	n.now = max(n.now, until)
	return nil
}

// RunUntil processes events until done reports true (checked before the
// first event and after each one). It fails with ErrLimit if the clock would
// pass limit first and with ErrIdle if no event is left.
func (n *Network) RunUntil(done func() bool, limit time.Duration) error {
	for !done() {
		if n.queue.len() == 0 {
			return fmt.Errorf("at %v: %w", n.now, ErrIdle)
		}
		if n.queue.peek().at > limit {
			n.now = max(n.now, limit)
			return fmt.Errorf("at %v: %w", limit, ErrLimit)
		}
		if err := n.step(); err != nil {
			return err
		}
	}
	return nil
}

// step processes the earliest event.
func (n *Network) step() error {
	e := n.queue.pop()
	n.now = e.at
	n.stats.Events++
	switch e.kind {
	case eventTimer:
		ep := n.endpoints[e.index]
		if !ep.hasWake || ep.wake != e.at {
			return nil // superseded by a later Poll's timer
		}
		ep.hasWake = false
		return n.poll(e.index)
	case eventLinkDue:
		return n.deliverLink(e.index)
	}
	return nil
}

// deliverLink hands a link's due packets to their endpoints, then polls
// each endpoint that received something, once, in arrival order.
func (n *Network) deliverLink(index int32) error {
	ls := n.links[index]
	if ls.isArmed && ls.armed == n.now {
		ls.isArmed = false
	}
	for {
		d, ok := ls.link.Deliver(n.now)
		if !ok {
			break
		}
		n.receive(d, ls.link.cfg.BleachECN)
	}
	n.armLink(index)
	dirty := n.dirty
	n.dirty = n.dirty[:0]
	for _, i := range dirty {
		n.endpoints[i].dirty = false
		if err := n.poll(i); err != nil {
			return err
		}
	}
	return nil
}

func (n *Network) receive(d Delivery, bleach bool) {
	f := n.flows[d.Tag&flowTagMask]
	ecn := arrivingECN(ECN(d.Tag>>ecnTagShift), d.CE, bleach)
	i, ok := n.byAddr[f.to]
	if !ok {
		n.stats.NoPort++
		n.report(Event{At: n.now, Kind: EventNoPort, From: f.from, To: f.to, Size: len(d.Data)})
		return
	}
	n.stats.Received++
	n.report(Event{At: n.now, Kind: EventReceive, From: f.from, To: f.to, Size: len(d.Data), CE: d.CE, ECN: ecn})
	ep := n.endpoints[i]
	if ep.ecnEP != nil {
		ep.ecnEP.ReceiveECN(n.now, f.from, d.Data, ecn)
	} else {
		ep.ep.Receive(n.now, f.from, d.Data)
	}
	if !ep.dirty {
		ep.dirty = true
		n.dirty = append(n.dirty, i)
	}
}

// poll asks an endpoint for its datagrams and next timer, and sends.
func (n *Network) poll(i int32) error {
	ep := n.endpoints[i]
	if ep.pollTime == n.now {
		ep.pollsAtSameTime++
		if ep.pollsAtSameTime > n.cfg.MaxPollsAtOneTime {
			return fmt.Errorf("endpoint %v at %v, %d polls: %w", ep.addr, n.now, ep.pollsAtSameTime, ErrSpin)
		}
	} else {
		ep.pollTime, ep.pollsAtSameTime = n.now, 1
	}
	out, next, ok := ep.ep.Poll(n.now)
	for _, d := range out {
		n.send(ep, d)
	}
	if ok {
		n.setWake(i, max(next, n.now))
	} else {
		ep.hasWake = false
	}
	return nil
}

func (n *Network) send(ep *endpointState, d Datagram) {
	n.stats.Sent++
	n.report(Event{At: n.now, Kind: EventSend, From: ep.addr, To: d.To, Size: len(d.Data), ECN: d.ECN & 0b11})
	if d.To != ep.lastTo || !ep.lastTo.IsValid() {
		li, ok := n.routes[nodePair{ep.addr.Addr(), d.To.Addr()}]
		if !ok {
			n.stats.NoRoute++
			n.report(Event{At: n.now, Kind: EventNoRoute, From: ep.addr, To: d.To, Size: len(d.Data)})
			return
		}
		ep.lastTo, ep.lastLink, ep.lastTag = d.To, li, n.flowTag(ep.addr, d.To)
	}
	n.links[ep.lastLink].link.OfferTagged(n.now, d.Data, ep.lastTag|uint64(d.ECN&0b11)<<ecnTagShift)
	n.armLink(ep.lastLink)
}

// flowTag interns a (from, to) pair; the tag rides with the packet.
func (n *Network) flowTag(from, to netip.AddrPort) uint64 {
	f := flow{from, to}
	tag, ok := n.flowIndex[f]
	if !ok {
		tag = uint64(len(n.flows))
		n.flows = append(n.flows, f)
		n.flowIndex[f] = tag
	}
	return tag
}

// armLink makes sure a delivery event is pending for the link's next due
// packet. An earlier event already pending covers it: when it fires, the
// link is armed again.
func (n *Network) armLink(i int32) {
	ls := n.links[i]
	next, ok := ls.link.Next()
	if !ok || (ls.isArmed && ls.armed <= next) {
		return
	}
	ls.armed, ls.isArmed = next, true
	n.schedule(event{at: next, kind: eventLinkDue, index: i})
}

func (n *Network) setWake(i int32, at time.Duration) {
	ep := n.endpoints[i]
	if ep.hasWake && ep.wake == at {
		return
	}
	ep.wake, ep.hasWake = at, true
	n.schedule(event{at: at, kind: eventTimer, index: i})
}

func (n *Network) schedule(e event) {
	e.seq = n.seq
	n.seq++
	n.queue.push(e)
}

func (n *Network) report(e Event) {
	if n.cfg.OnEvent != nil {
		n.cfg.OnEvent(e)
	}
}
