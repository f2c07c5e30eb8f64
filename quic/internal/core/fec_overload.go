package core

import "time"

// The overload guard. When the sender cannot keep up with what the
// application gives it (a tunnel feeding IP packets faster than this end
// seals and codes them), its DATAGRAM send queue overflows while the
// congestion window has room for all of it and the pacer would let a
// packet go: the connection's turns come too seldom for the work. Repairs owed then take that scarce
// work ahead of data that already waits, so the redundancy gives way
// first, as HIRT's tunnel degrades its coding under load and keeps
// forwarding: the repairs owed and the allowance saved up are shed, and
// until the queue has drained to half its size the repairs owed are shed
// before each packet that would carry one; they resume after as new
// sources earn them. RepairsShed counts what was dropped.
//
// A queue that overflows because the path is the bottleneck (the window
// has no room for what waits, or the pacer holds the next packet) is no
// overload of the sender, and repairs go on: on a path with random loss they are what lets
// the auto policy keep the window open (quic.FECAuto), and shedding them
// there halved the datagrams a flooding sender delivered
// (TestSimOverloadShedsRepairs).

// onSendQueueOverflow marks the sender overloaded if the queue overflowed
// at now while the window had room for all of it and the pacer would let
// a packet go.
func (c *Conn) onSendQueueOverflow(now time.Duration) {
	if c.fec == nil || c.fec.send == nil || !c.sender.CanSend() || c.sender.NextSendTime(now, c.maxDatagram) > now {
		return
	}
	room := int64(c.sender.CongestionWindow()) - c.sender.BytesInFlight()
	if room < int64(c.dgram.sendQ.len()*c.maxDatagram) {
		return
	}
	c.dgram.overloaded = true
	c.fec.send.shed()
	c.fec.send.budget.drain()
}

// sendBacklogged reports whether the sender is overloaded and its send
// queue has not drained to half its size since.
func (c *Conn) sendBacklogged() bool {
	d := &c.dgram
	if d.overloaded && 2*d.sendQ.len() < d.sendLimit {
		d.overloaded = false
	}
	return d.overloaded
}

// shed drops the repairs owed.
func (f *fecSender) shed() {
	f.stats.RepairsShed += uint64(f.owed)
	f.owed = 0
}
