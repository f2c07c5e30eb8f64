package http3

import (
	"os"
	"time"
)

// The write side of streamGuard: responses whose client stopped reading
// (ResponseStallTimeout) and the handler's write deadline.

// Write writes p to the stream. It may wait ResponseStallTimeout for the
// client's flow control to take a byte, every time. While it waits it is
// on the Server's list of writes (watch.go), which interrupts it at the
// end of each slice of an eighth of the timeout, so that it learns what
// the client took meanwhile.
func (g *streamGuard) Write(p []byte) (int, error) { return g.write(p, false) }

// WriteClose is Write that ends the stream with the last of p
// (quic.Stream.WriteClose); when it fails, the stream is not closed.
func (g *streamGuard) WriteClose(p []byte) (int, error) { return g.write(p, true) }

// write is Write, and WriteClose with fin.
func (g *streamGuard) write(p []byte, fin bool) (int, error) {
	total := 0
	// The last progress known: the start of the Write, the time the
	// list of writes read when the Write joined it (one clock reading
	// per response rather than two), or else the first interruption.
	var last time.Time
	for {
		g.armWrite()
		if g.writes != nil {
			if t := g.writes.join(&g.writeItem); last.IsZero() {
				last = t
			}
		}
		var n int
		var err error
		if fin {
			n, err = g.st.WriteClose(p[total:])
		} else {
			n, err = g.st.Write(p[total:])
		}
		if g.writes != nil {
			g.writes.leave(&g.writeItem, false)
		}
		total += n
		if err == nil || !isDeadline(err) {
			return total, err
		}
		now := time.Now()
		if last.IsZero() {
			last = now
		}
		switch {
		case g.passed(&g.userWrite):
			return total, os.ErrDeadlineExceeded
		case n > 0:
			last = now
		case g.writeIdle > 0 && now.Sub(last) >= g.writeIdle:
			return total, g.stalled()
		}
	}
}

// SetWriteDeadline sets the handler's write deadline; it applies to a
// write under way (http.ResponseController).
func (g *streamGuard) SetWriteDeadline(t time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.userWrite = t
	g.setWriteDeadlineLocked(g.writeDeadlineLocked())
	return nil
}

// armWrite sets the deadline of a write about to start: the handler's.
func (g *streamGuard) armWrite() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sliceOver = false
	g.setWriteDeadlineLocked(g.userWrite)
}

// interruptWrite ends the slice of the write under way: it returns with
// what the client took so far. A write that ended just before is not
// harmed: the next one rearms the deadline.
func (g *streamGuard) interruptWrite() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.sliceOver = true
	g.setWriteDeadlineLocked(aLongTimeAgo)
}

// writeDeadlineLocked is the deadline a write has now: past at the end
// of its slice, else the handler's.
func (g *streamGuard) writeDeadlineLocked() time.Time {
	if g.sliceOver {
		return aLongTimeAgo
	}
	return g.userWrite
}

func (g *streamGuard) setWriteDeadlineLocked(dl time.Time) {
	if !dl.Equal(g.armedWrite) {
		g.armedWrite = dl
		_ = g.st.SetWriteDeadline(dl)
	}
}

// passed reports whether the deadline *dl, if any, passed.
func (g *streamGuard) passed(dl *time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !dl.IsZero() && !time.Now().Before(*dl)
}

// stalled resets a response whose client stopped reading.
func (g *streamGuard) stalled() error {
	g.counts.slowWrites.Add(1)
	g.reset(ErrCodeRequestCancelled)
	return streamError(ErrCodeRequestCancelled, "the client took no response data for %v", g.writeIdle)
}
