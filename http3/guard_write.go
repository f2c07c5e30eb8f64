package http3

import (
	"os"
	"time"
)

// The write side of streamGuard: responses whose client stopped reading
// (ResponseStallTimeout) and the handler's write deadline.

// Write writes p to the stream. It may wait ResponseStallTimeout for the
// client's flow control to take a byte, every time.
func (g *streamGuard) Write(p []byte) (int, error) {
	total := 0
	last := time.Now() // the last progress known
	for {
		g.armWrite(last)
		n, err := g.st.Write(p[total:])
		total += n
		if err == nil || !isDeadline(err) {
			return total, err
		}
		now := time.Now()
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
	g.setWriteDeadlineLocked(earliest(t, g.sliceEnd))
	return nil
}

// armWrite sets the write's deadline: the handler's, or the end of the
// slice, which is kept while at least a sixteenth of the timeout is left
// of it and it ends before last progress plus the timeout.
func (g *streamGuard) armWrite(last time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d := g.writeIdle; d > 0 {
		now := time.Now()
		limit := last.Add(d)
		if g.sliceEnd.Sub(now) < d/16 || g.sliceEnd.After(limit) {
			g.sliceEnd = earliest(limit, now.Add(d/8))
		}
	}
	g.setWriteDeadlineLocked(earliest(g.userWrite, g.sliceEnd))
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
