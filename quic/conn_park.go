package quic

import (
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
)

// A connection's goroutine parks when it has nothing to do for a while
// (its next timer is parkAfter away or more, and it received and sent
// nothing for parkAfter):
// it returns, and the next thing that needs it (a datagram from the
// reader, an application call, its timer, the Transport closing) starts
// it again. An idle connection then holds no goroutine and no stack, and
// a server holding many idle connections holds only their state.
//
// loop is the goroutine's state, which every wake-up goes through
// (signal), so that none is lost:
//
//   - loopRunning: the goroutine is stepping the core. A signal makes it
//     loopSignalled, so that the goroutine steps again before it waits or
//     parks: what the signaller published before signalling may have
//     come after the step looked.
//   - loopWaiting: the goroutine waits on wake for a short timer. The
//     signal that moves it back to loopRunning sends the one token.
//   - loopParked: no goroutine. The signal that moves it back to
//     loopRunning starts one.
//
// The goroutine sets loopRunning before it takes the inbox and steps, and
// leaves loopRunning for loopWaiting or loopParked only by compare and
// swap, which fails if a signal came in between.
const (
	loopRunning int32 = iota
	loopSignalled
	loopWaiting
	loopParked
	// loopDrained: no goroutine, and none starts again: the Transport
	// ends the draining connection (transport_drain.go).
	loopDrained
)

// parkAfter is the shortest wait for which the goroutine parks rather
// than waits: a connection whose next timer is this far away (an idle
// timeout, a keep-alive, a probe timeout on a long path) has nothing to
// do until then unless something wakes it. Shorter waits (pacing, delayed
// ACKs, the probe timeout of a short path) keep the goroutine, which
// would otherwise start again at once; and so does a connection that
// received or sent within parkAfter, whose next datagram likely comes
// soon.
const parkAfter = 100 * time.Millisecond

// handshakeAwake is how long a connection whose handshake is not confirmed
// keeps its goroutine however far its timer: about the first probe timeout
// of the default initial RTT (3 x 333 ms, RFC 9002 section 6.2.1).
const handshakeAwake = time.Second

// awakeFor reports whether the goroutine may park, and if not, for how
// much longer it may not: it may once the handshake is confirmed, or once
// it has lasted handshakeAwake. Until then the
// handshake's next datagrams come within a round trip, which on most paths
// is much shorter than the probe timeout it waits for: parking would end
// the goroutine only to start it again at once, its stack growing anew,
// and drop the core's scratch, its 1-RTT ciphers among them, only for the
// next step to make them again. A handshake still going after a probe
// timeout is a slow or a silent one, and parks as an idle connection
// does, so that handshakes left silent cost the server little.
func (c *Conn) awakeFor() (time.Duration, bool) {
	select {
	case <-c.confirmed:
		return 0, true
	default:
		left := c.start + handshakeAwake - c.t.now()
		return left, left <= 0
	}
}

// parkWait is the shortest wait for which the Transport's connections
// park: parkAfter, unless a test set parkAfterOverride (a tiny value
// parks at every wait, which puts every wake-up through the race between
// parking and signalling).
func (t *Transport) parkWait() time.Duration {
	if t.parkAfterOverride > 0 {
		return t.parkAfterOverride
	}
	return parkAfter
}

// loopState is the connection goroutine's state and what it keeps from
// one run to the next; only the goroutine touches the fields after loop.
type loopState struct {
	loop atomic.Int32
	// timer signals the connection, through timerTarget, when the
	// core's next deadline comes, whether its goroutine waits or is
	// parked.
	timer       *time.Timer
	timerTarget *timerTarget
	wake        chan struct{}

	// batch and in are the step's scratch, dropped when it parks.
	batch []*packet
	in    []core.Datagram
	spins int
	// active is when a step last received or sent a datagram: the
	// goroutine parks only once its connection was quiet for parkWait.
	active time.Duration
	// closedByTransport: the goroutine saw its Transport close and
	// closed the connection; exiting: it leaves after the next step.
	closedByTransport bool
	exiting           bool
	// wokeApp: the step's events woke the application, which may answer
	// at once (step_yield.go). Guarded by mu.
	wokeApp bool
	// answersPeer: a connection handed to its Transport while closing,
	// whose reader answers the peer (transport_drain.go); set before
	// loopDrained. drainOver: the Transport ended it; guarded by mu.
	answersPeer bool
	drainOver   bool
}

// timerTarget is what a connection's timer calls. The goroutine clears it
// when the connection ends: a stopped timer stays in the runtime's timer
// heap until its time comes or the heap is cleaned, and it must not keep
// an ended connection's memory alive that long.
type timerTarget struct{ c atomic.Pointer[Conn] }

func (tt *timerTarget) fire() {
	if c := tt.c.Load(); c != nil {
		c.signal()
	}
}

// startLoop starts the connection's goroutine for the first time.
func (c *Conn) startLoop() {
	c.wake = make(chan struct{}, 1)
	c.timerTarget = new(timerTarget)
	c.timerTarget.c.Store(c)
	c.timer = time.AfterFunc(time.Hour, c.timerTarget.fire)
	go c.run()
}

// stopTimer stops the timer for good when the connection ends.
func (c *Conn) stopTimer() {
	c.timer.Stop()
	c.timerTarget.c.Store(nil)
}

// signal wakes the connection goroutine, or starts it if it is parked:
// a datagram arrived, the application wrote, read or changed a stream,
// the timer fired, or the Transport closes, and the core may have
// something to do.
func (c *Conn) signal() {
	for {
		switch c.loop.Load() {
		case loopRunning:
			if c.loop.CompareAndSwap(loopRunning, loopSignalled) {
				return
			}
		case loopSignalled:
			return
		case loopWaiting:
			if c.loop.CompareAndSwap(loopWaiting, loopRunning) {
				c.wake <- struct{}{}
				return
			}
		case loopParked:
			if c.loop.CompareAndSwap(loopParked, loopRunning) {
				go c.run()
				return
			}
		case loopDrained:
			return
		}
	}
}

// park ends the goroutine until the next signal, which its timer gives
// at the latest; it reports false, and the goroutine goes on, if a
// signal came since the step began. Nothing may touch the loop's fields
// after a successful park: a new goroutine may be running already.
func (c *Conn) park() bool {
	// The core frees what it can build again: the ciphers of its keys,
	// its empty logs and scratch (core.Conn.ReleaseIdle).
	c.mu.Lock()
	c.core.ReleaseIdle()
	c.mu.Unlock()
	batch, in := c.batch, c.in
	c.batch, c.in = nil, nil
	if c.loop.CompareAndSwap(loopRunning, loopParked) {
		return true
	}
	c.batch, c.in = batch, in
	return false
}
