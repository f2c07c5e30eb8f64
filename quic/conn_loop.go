package quic

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"slices"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/udp"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Each connection has a goroutine of its own that owns the core's clock:
// it feeds the core the datagrams the reader queued, runs its timers in
// real time and sends what it builds. One goroutine per connection, rather
// than one event loop for the Transport, lets a server decrypt and encrypt
// many connections on many cores, and keeps one slow connection from
// delaying the others; the application's goroutines call the core directly
// under the connection's mutex, so a stream Read or Write costs no
// goroutine hand-off.

const (
	// maxBatchesPerStep bounds the batches one step sends before it
	// looks at received datagrams again, so that ACKs are processed
	// promptly during a long burst: 256 datagrams (sendBatchSize).
	maxBatchesPerStep = 2
	// maxIdleSpins is how many times in a row the goroutine lets a timer
	// that is already due run without anything to show for it, before
	// it sleeps for spinPause: a guard against a busy loop, should the
	// core report a deadline it cannot act on yet.
	maxIdleSpins = 16
	spinPause    = 100 * time.Microsecond
)

// deliver queues a copy of a datagram for the connection.
func (c *Conn) deliver(data []byte, from netip.AddrPort, cp ecn.Codepoint) {
	p := c.t.getPacket(data, from, cp)
	c.deliverPackets([]*packet{p})
}

// deliverPackets queues the reader's packets for the connection, as many
// as the inbox has room for, and wakes its goroutine once if the inbox
// was empty: a reader hands over all of a batch's datagrams for one
// connection at once, so that the goroutine wakes once for them rather
// than take them one by one as they arrive. It clears ps.
func (c *Conn) deliverPackets(ps []*packet) {
	if c.loop.Load() == loopDrained {
		// A draining connection drops what arrives (RFC 9000 section
		// 10.2.2), and a closing one answers it here, without a
		// goroutine to take it (transport_drain.go).
		if c.answersPeer {
			c.answerClosing(ps)
		}
		for _, p := range ps {
			c.t.putPacket(p)
		}
		clear(ps)
		return
	}
	c.inboxMu.Lock()
	first := len(c.inbox) == 0
	room := max(0, maxInbox-len(c.inbox))
	taken := min(room, len(ps))
	c.inbox = append(c.inbox, ps[:taken]...)
	c.inboxMu.Unlock()
	for _, p := range ps[taken:] {
		c.t.putPacket(p)
	}
	clear(ps)
	if first && taken > 0 {
		c.signal()
	}
}

// takeInbox swaps the queued datagrams out into spare (emptied).
func (c *Conn) takeInbox(spare []*packet) []*packet {
	c.inboxMu.Lock()
	in := c.inbox
	c.inbox = spare[:0]
	c.inboxMu.Unlock()
	return in
}

// run is the connection's goroutine: it runs from the connection's start
// until the connection ends, except while it is parked (conn_park.go).
func (c *Conn) run() {
	growStack()
	for {
		c.loop.Store(loopRunning)
		c.batch = c.takeInbox(c.batch)
		c.in = c.in[:0]
		for _, p := range c.batch {
			c.in = append(c.in, p.datagram())
		}
		next, alive, progress := c.step(c.in)
		clear(c.in)
		c.t.putPackets(c.batch)
		if !alive || c.exiting || c.evicted() {
			break
		}
		if !c.closedByTransport && c.t.isClosing() {
			c.closeForTransport()
			continue
		}
		if c.handOverDrain(next) {
			return
		}
		now := c.t.now()
		if progress {
			c.active = now
		}
		wait := next - now
		if wait <= 0 {
			if progress {
				c.spins = 0
				continue
			}
			if c.spins++; c.spins < maxIdleSpins {
				continue
			}
			wait = spinPause
		}
		c.spins = 0
		if park := c.t.parkWait(); wait >= park {
			awake, ok := c.awakeFor()
			quiet := now - c.active
			switch {
			case ok && quiet >= park:
				c.timer.Reset(wait)
				if c.park() {
					return
				}
				continue
			case ok:
				// Busy a moment ago: it waits, and parks once quiet
				// for parkWait. A client whose requests were all
				// answered otherwise parked between two bursts of
				// requests, and the next started its goroutine anew,
				// a quarter of the times a load generator sent a
				// request.
				wait = park - quiet
			default:
				// A handshake waits, and looks again when it may park.
				wait = min(wait, awake)
			}
		}
		c.timer.Reset(wait)
		if !c.loop.CompareAndSwap(loopRunning, loopWaiting) {
			// Signalled since the step began: step again at once.
			continue
		}
		<-c.wake
		// A wake-up comes from a stream write, or from the reader
		// with datagrams. Yielding once lets the other goroutines
		// that are ready to run first (the handlers of a server's
		// other requests, the reader) add their writes and
		// datagrams: the next step then sends many streams'
		// packets in one batch, rather than one response per
		// system call. On loopback under 200 concurrent requests
		// of 1 KiB this made about a quarter as many sendmmsg
		// calls per request.
		runtime.Gosched()
	}
	c.stopTimer()
	c.finish()
	close(c.loopDone)
	c.t.connWG.Done()
}

// stepStack is about the stack a step takes at its deepest: a datagram
// through the core's receive path to a frame handler (the transport
// parameters' parser, congestion control on an ACK).
const stepStack = 12 << 10

// growStack grows the goroutine's stack, which starts small, to hold a
// step at once: a new goroutine's stack otherwise doubles from deep in
// the first steps, each time copying every frame above it, which cost a
// server about 3% of its CPU when each connection lives for one request.
// Growing it here copies only this frame and run's.
//
//go:noinline
func growStack() {
	var room [stepStack]byte
	touchStack(room[:])
}

// touchStack keeps growStack's array, and so its frame, from being
// optimised away.
//
//go:noinline
func touchStack(b []byte) { b[len(b)-1] = 0 }

// closeForTransport closes the connection because its Transport closes:
// the goroutine leaves after the next step has sent CONNECTION_CLOSE.
func (c *Conn) closeForTransport() {
	c.closedByTransport = true
	c.mu.Lock()
	c.byTransport = true
	c.core.Close(c.t.now(), 0, "")
	c.mu.Unlock()
	c.exiting = true
}

// step is one turn of the core's calling protocol: it feeds the core the
// queued datagrams and runs its due timers (Step), dispatches the core's
// events, and sends what the core has. It returns when the core next needs
// attention, whether the connection is still alive, and whether anything
// was received or sent.
func (c *Conn) step(in []core.Datagram) (next time.Duration, alive, progress bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.t.now()
	c.core.Step(now, in)
	progress = len(in) > 0
	c.dispatchEvents(now)
	if c.wokeApp {
		now = c.yieldToApp()
	}
	c.offerEarly(now)
	c.sendProbes(now)
	for range maxBatchesPerStep {
		n, full := c.sendBatch(now)
		progress = progress || n > 0
		if !full {
			break
		}
		now = c.t.now()
	}
	// Packets sent, or queued datagrams dropped as too large for the
	// path, make room in the DATAGRAM send queue (SendDatagramsWait).
	c.datagramRoom.fire()
	c.dispatchEvents(now)
	c.syncResetTokens()
	if c.err != nil && !c.closeFlushed {
		c.closeFlushed = true
		close(c.flushed)
	}
	next, alive = c.core.NextTimer(now)
	return next, alive && !c.core.Closed(), progress
}

// sendBatch builds up to one batch of datagrams and sends it with the
// mutex released, so that the application can write meanwhile. It reports
// how many it sent and whether the batch was full (more may wait).
func (c *Conn) sendBatch(now time.Duration) (int, bool) {
	b := c.t.getSendBatch()
	n := 0
	for n < len(b.msgs) {
		d, ok := c.core.NextDatagram(now, b.buf(n))
		if !ok {
			break
		}
		b.bufs[n] = d.Data[:0]
		b.msgs[n] = udp.Message{Data: d.Data, Addr: d.Addr, ECN: d.ECN}
		n++
		if len(d.Data) >= 5 && wire.IsLongHeader(d.Data[0]) {
			// The version of the core's latest long-header packet is
			// the connection's, after Version Negotiation or a
			// compatible switch (RFC 9368) too.
			c.version = Version(binary.BigEndian.Uint32(d.Data[1:5]))
		}
	}
	if n > 0 {
		path, preferred := c.path, c.preferred
		c.mu.Unlock()
		switch {
		case path != nil:
			path.send(b.msgs[:n])
		case preferred:
			c.t.sendPreferred(b.msgs[:n])
		default:
			c.t.send(c.sock, b.msgs[:n])
		}
		c.mu.Lock()
	}
	c.t.putSendBatch(b, n)
	return n, n == len(b.msgs)
}

// send writes datagrams on socket s. A datagram the socket refuses (too
// large for the path, a peer unreachable) is skipped: QUIC's loss recovery
// treats it as lost.
func (t *Transport) send(s *socket, msgs []udp.Message) {
	for len(msgs) > 0 {
		s.writeMu.Lock()
		n, err := s.io.WriteBatch(msgs)
		s.writeMu.Unlock()
		if err == nil || errors.Is(err, net.ErrClosed) {
			return
		}
		msgs = msgs[min(n+1, len(msgs)):]
	}
}

// dispatchEvents acts on the core's events; c.mu is held.
func (c *Conn) dispatchEvents(now time.Duration) {
	for {
		ev, ok := c.core.PollEvent()
		if !ok {
			return
		}
		switch ev.Kind {
		case core.EventHandshakeComplete:
			c.handshakeTime = now - c.start
			close(c.handshakeDone)
			c.endUnvalidated()
			// A client that opened streams in 0-RTT under the limits
			// remembered from its last connection now has the
			// server's: waiting OpenStreamSync calls look again.
			c.wakeOpenersLocked(true)
			c.wakeOpenersLocked(false)
			c.onServerHandshakeComplete(now)
			c.wokeApp = true
		case core.EventHandshakeConfirmed:
			close(c.confirmed)
			if c.hasODCID {
				// The client uses our connection ID from now on
				// (RFC 9000 section 7.2).
				c.t.removeRoute(c.odcid, c)
				c.hasODCID = false
			}
		case core.EventStreamOpened:
			s := c.streamLocked(ev.StreamID)
			d := dirIndex(ev.Bidi)
			c.accept[d] = append(c.accept[d], s)
			c.acceptReady[d].fire()
			c.wokeApp = true
		case core.EventStreamReadable:
			if s := c.streams[ev.StreamID]; s != nil {
				s.readable.fire()
			}
		case core.EventStreamWritable:
			if s := c.streams[ev.StreamID]; s != nil {
				s.writable.fire()
			}
		case core.EventStreamsAvailable:
			c.wakeOpenersLocked(ev.Bidi)
		case core.EventConnIDIssued:
			c.t.addRoute(ev.ConnID, c)
			c.routes = append(c.routes, ev.ConnID)
		case core.EventConnIDRetired:
			c.t.removeRoute(ev.ConnID, c)
			c.routes = slices.DeleteFunc(c.routes, func(id wire.ConnectionID) bool { return id == ev.ConnID })
		case core.EventDatagramReceived:
			c.datagramReady.fire()
		case core.EventEarlyDataRejected:
			// Nothing to do: the core sends the 0-RTT data again in
			// 1-RTT packets, and the streams go on.
		case core.EventClosed:
			c.setClosedLocked(ev.Err)
		case core.EventPeerAddressChanged, core.EventPathMigrated, core.EventPathProbeFailed, core.EventPreferredAddressUsed:
			c.onPathEvent(ev)
		}
	}
}

// setClosedLocked records why the connection closed and wakes every
// waiting call; c.mu is held.
func (c *Conn) setClosedLocked(reason error) {
	if c.err != nil {
		return
	}
	err := connError(reason)
	if c.byTransport || err == nil {
		c.t.mu.RLock()
		err = c.t.closeErr
		c.t.mu.RUnlock()
		if err == nil {
			err = ErrTransportClosed
		}
	}
	c.err = err
	close(c.closed)
	// Reads and Writes without a deadline wait on their stream's
	// signals (streamSignal): the connection's end wakes them
	// there. Every stream one may wait on is in c.streams, as a stream
	// leaves it only once both its directions ended.
	for _, s := range c.streams {
		s.readable.fire()
		s.writable.fire()
	}
	c.wakeAllOpenersLocked()
	c.cancel(err)
}

// endUnvalidated returns a server connection's place among its Listener's
// unvalidated handshakes, once its handshake ended.
func (c *Conn) endUnvalidated() {
	if c.unvalidated {
		c.unvalidated = false
		c.l.handshakeOver()
	}
}

// finish runs when the goroutine ends: the connection is forgotten and
// whatever still waits on it is released.
func (c *Conn) finish() {
	c.mu.Lock()
	c.setClosedLocked(errors.New("quic: connection ended"))
	if !c.closeFlushed {
		c.closeFlushed = true
		close(c.flushed)
	}
	for _, s := range c.streams {
		s.stopTimers()
	}
	c.core.Release()
	c.qlog.close()
	c.endUnvalidated()
	c.mu.Unlock()
	ids := c.routes
	if c.hasODCID {
		ids = append(ids, c.odcid)
	}
	c.t.forget(c, ids)
	c.stopPaths()
	for _, p := range c.takeInbox(nil) {
		c.t.putPacket(p)
	}
	if c.isClient && c.t.singleUse {
		// A DialAddr connection takes its socket with it. Close itself
		// would wait for this goroutine, so only the steps that do not.
		c.t.shutdown(ErrTransportClosed)
		_ = c.t.closeSocket()
	}
}
