package core

import "time"

// deadlines collects the earliest of several optional times.
type deadlines struct {
	t  time.Duration
	ok bool
}

func (d *deadlines) add(t time.Duration, ok bool) {
	if ok && (!d.ok || t < d.t) {
		d.t, d.ok = t, true
	}
}

// NextTimer returns when the connection next needs Step (and then
// NextDatagram), asked at now: a loss detection or probe timeout, a delayed
// ACK, the pacer releasing a packet, the idle or handshake timeout, the end
// of the closing period. ok is false when nothing is scheduled (a closed
// connection). A time due already is returned as now.
func (c *Conn) NextTimer(now time.Duration) (time.Duration, bool) {
	var d deadlines
	switch c.state {
	case stateClosed:
		return 0, false
	case stateClosing, stateDraining:
		return c.closing.timer(now, probeTimeout(c.sender.RTT()))
	}
	d.add(c.handshakeDeadline, !c.handshakeComplete)
	d.add(c.idle.timer(probeTimeout(c.sender.RTT()), c.handshakeConfirmed))
	d.add(c.sender.Deadline())
	d.add(c.ku.discardTimer())
	d.add(c.early.timer())
	d.add(c.pathTimer())
	d.add(c.datagramOrderTimer())
	d.add(c.overdueDeadline())
	if c.datagramBudget() < minInitialDatagram {
		// Blocked by the anti-amplification limit: only receiving helps.
		return d.t, d.ok
	}
	// Ack-eliciting frames wait for the pacer when the window allows
	// them.
	canSend, hasData := c.sender.CanSend(), false
	for s := range spaceApp + 1 {
		if c.canSendIn(s) {
			d.add(c.spaces[s].acks.timer())
			hasData = hasData || (canSend && c.hasDataIn(s))
		}
	}
	// So do owed FEC repairs: one owed after the last source of a paced
	// burst otherwise waited for the next ACK, or for the probe timeout
	// if the burst's last packets were lost, the very losses it was
	// owed to repair; and repairs of sources known lost
	// (fec_lossrepair.go).
	hasData = hasData || (canSend && c.canSendIn(spaceApp) && (c.fec.repairOwed() || c.fec.lossRepairDue()))
	if hasData {
		d.add(c.sender.NextSendTime(now, c.maxDatagram), true)
	}
	d.add(c.pmtu.timer(now, c.sender))
	if d.ok && d.t < now {
		d.t = now
	}
	return d.t, d.ok
}

// HandleTimer runs the timers due at now and nothing else, so a driver may
// call it at any time; Step calls it after the datagrams. Call NextDatagram
// afterwards: a timer may have made probes or ACKs due.
func (c *Conn) HandleTimer(now time.Duration) {
	switch c.state {
	case stateClosed:
		return
	case stateClosing, stateDraining:
		// A CONNECTION_CLOSE not sent yet goes out first.
		if c.closing.over(now, probeTimeout(c.sender.RTT())) {
			c.setClosed()
		}
		return
	}
	if !c.handshakeComplete && now >= c.handshakeDeadline {
		c.end(stateClosed, ErrHandshakeTimeout)
		return
	}
	if c.idle.onTimer(now, probeTimeout(c.sender.RTT()), c.handshakeConfirmed) {
		c.end(stateClosed, ErrIdleTimeout)
		return
	}
	if c.checkController() {
		return
	}
	c.early.onTimer(now)
	c.ku.onTimer(now, c.appRead)
	if t, ok := c.sender.Deadline(); ok && now >= t {
		c.onRecoveryResult(now, c.sender.OnTimeout(now))
	}
	c.pmtuUpdate(now)
	c.onPathTimer(now)
	c.releaseDatagrams(now)
	c.onOverdue(now)
}
