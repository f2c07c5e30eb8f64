package quic

import (
	"runtime"
	"time"
)

// yieldToApp lets the goroutines a step's events just woke run before the
// step builds its datagrams; c.mu is held, and released meanwhile.
//
// A handshake that completes wakes a client's dialer, which writes its
// first request, and a server's Accept, whose HTTP/3 connection writes its
// SETTINGS; a peer's new stream wakes the server's handler, which writes
// its response. Built at once, the step's datagrams would carry only the
// ACKs and HANDSHAKE_DONE, and the application's data would follow in
// datagrams of its own, one more system call, packet and wake-up at each
// end. Yielding once lets what the woken goroutines write go out in the
// step's batch: they were made ready by the step and run ahead of it, on
// this processor or another, while it waits at the back of the run queue.
// It returns the time after the yield.
func (c *Conn) yieldToApp() time.Duration {
	c.wokeApp = false
	c.mu.Unlock()
	runtime.Gosched()
	c.mu.Lock()
	now := c.t.now()
	// What the application did meanwhile (a stream opened, a
	// CONNECTION_CLOSE) may have queued events.
	c.dispatchEvents(now)
	c.wokeApp = false
	return now
}
