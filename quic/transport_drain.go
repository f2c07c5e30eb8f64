package quic

import (
	"sync"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
)

// A connection whose peer closed it drains: for three probe timeouts it
// sends nothing and drops what arrives, so that late packets get no
// Stateless Reset, and then it ends (RFC 9000 section 10.2.2). One that
// closed itself is closing for as long, and answers what arrives with its
// CONNECTION_CLOSE, less and less often (section 10.2.1). Neither needs
// its goroutine, which used to wait the period out, often parked and
// started again by its timer, or by the peer's last datagrams, only to
// end: about half of a server's steps and two of its three goroutine
// starts when each connection carried one request, and as much at the
// load generator that closed them. The goroutine leaves once the
// connection drains, or its CONNECTION_CLOSE went out; the reader answers
// a closing connection's datagrams itself (answerClosing), and the
// Transport ends the connection when the period is over, checking every
// drainTick: a period is at least three probe timeouts, and may last a
// tick longer. Both states are called draining below.

// drainTick is how often the Transport looks for draining connections
// whose period is over.
const drainTick = 10 * time.Millisecond

// drainer holds a Transport's draining connections.
type drainer struct {
	mu     sync.Mutex
	conns  []drainingConn
	timer  *time.Timer
	armed  bool
	closed bool // the Transport closed: connections end at once
}

// drainingConn is a draining connection and the end of its period, on
// the Transport's clock.
type drainingConn struct {
	c   *Conn
	end time.Duration
}

// handOverDrain gives a draining or closing connection to its
// Transport, which ends it at deadline; it reports whether it did, and
// the goroutine must then leave at once without touching the connection.
// It does not while the connection is active, or closing with its
// CONNECTION_CLOSE not sent yet, or when a signal came since the step
// began; nor for a DialAddr connection, whose end closes its Transport.
func (c *Conn) handOverDrain(deadline time.Duration) bool {
	if c.isClient && c.t.singleUse {
		return false
	}
	c.mu.Lock()
	draining, closing := c.core.Draining(), c.core.CloseSent()
	c.mu.Unlock()
	if !draining && !closing {
		return false
	}
	// Published to the reader by the swap below.
	c.answersPeer = closing
	if !c.loop.CompareAndSwap(loopRunning, loopDrained) {
		return false
	}
	// From here signals do nothing, and the reader drops the
	// connection's datagrams (deliverPackets).
	c.stopTimer()
	c.t.drainLater(c, deadline)
	return true
}

// endDrained ends a connection handed over by handOverDrain, as its
// goroutine would have once the period was over.
func (c *Conn) endDrained() {
	c.mu.Lock()
	c.drainOver = true
	c.mu.Unlock()
	c.finish()
	close(c.loopDone)
	c.t.connWG.Done()
}

// drainLater ends c at end, or at once if the Transport closed.
func (t *Transport) drainLater(c *Conn, end time.Duration) {
	d := &t.drain
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		c.endDrained()
		return
	}
	d.conns = append(d.conns, drainingConn{c: c, end: end})
	if !d.armed {
		d.armed = true
		if d.timer == nil {
			d.timer = time.AfterFunc(drainTick, t.sweepDrained)
		} else {
			d.timer.Reset(drainTick)
		}
	}
	d.mu.Unlock()
}

// sweepDrained ends the connections whose period is over, or which the
// Listener evicted meanwhile, and looks again a tick later while others
// drain.
func (t *Transport) sweepDrained() {
	now := t.now()
	d := &t.drain
	var over []*Conn
	d.mu.Lock()
	keep := d.conns[:0]
	for _, dc := range d.conns {
		if now >= dc.end || dc.c.evicted() {
			over = append(over, dc.c)
		} else {
			keep = append(keep, dc)
		}
	}
	clear(d.conns[len(keep):])
	d.conns = keep
	d.armed = len(keep) > 0 && !d.closed
	if d.armed {
		d.timer.Reset(drainTick)
	}
	d.mu.Unlock()
	for _, c := range over {
		c.endDrained()
	}
}

// endAllDrained ends every draining connection at once, and those that
// start draining later as they do: the Transport closes.
func (t *Transport) endAllDrained() {
	d := &t.drain
	d.mu.Lock()
	d.closed = true
	conns := d.conns
	d.conns = nil
	d.armed = false
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
	for _, dc := range conns {
		dc.c.endDrained()
	}
}

// answerClosing feeds a closing connection that has no goroutine the
// datagrams of the reader ps, and sends the CONNECTION_CLOSE the core
// answers with, if it is due (RFC 9000 section 10.2.1): what the
// goroutine's step did.
func (c *Conn) answerClosing(ps []*packet) {
	in := make([]core.Datagram, 0, len(ps))
	for _, p := range ps {
		in = append(in, p.datagram())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.drainOver {
		return
	}
	now := c.t.now()
	c.core.Step(now, in)
	c.sendBatch(now)
}
