package http3

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// streamGuard holds a request stream to the Server's timeouts: it is the
// reader under the stream's bufio.Reader and the writer of its response.
//
//   - Until its header is read, the stream has ReadHeaderTimeout from its
//     arrival: a client that sends a byte a second, or stops, is cut off
//     (RFC 9114 section 4.1.1: H3_REQUEST_INCOMPLETE). The Server's one
//     timer over the streams whose header is awaited (headertimer.go) tells
//     the guard, so that a request costs no timer of its own for it.
//   - A read that waits IdleStreamTimeout for a byte, of the header or of
//     the body a handler reads, resets the stream the same way.
//   - A write that waits ResponseStallTimeout for the client's flow
//     control to take a byte resets the response with
//     H3_REQUEST_CANCELLED (RFC 9114 section 8.1) and ends the request's
//     context.
//
// The deadlines a handler sets through http.ResponseController apply as
// well; when one of those passes, the handler gets
// os.ErrDeadlineExceeded and the stream lives on, as with net/http.
//
// A read moves its idle deadline forward only once an eighth of the
// timeout went by since it was armed, so that a busy stream does not
// rearm a timer at every read: a read that gets nothing is cut off
// between the timeout and 9/8 of it after it began. A write may be taken
// in part before it blocks, which its result does not date: it waits in
// slices of an eighth of the timeout, and a slice that took some of it
// dates the last progress. The slices are kept by the Server's one list
// of writes under way (watch.go), not by a timer per write. A write is
// cut off between the timeout and 9/8 of it after the last byte the
// client's flow control took.
type streamGuard struct {
	st *quic.Stream
	// readIdle and writeIdle are IdleStreamTimeout and
	// ResponseStallTimeout; 0 is no limit.
	readIdle, writeIdle time.Duration
	counts              *serverCounters
	// writes and handlers are the Server's watch lists (watch.go) of
	// the writes under way, nil without ResponseStallTimeout, and of
	// the handlers running; writeItem and handlerItem are this
	// stream's places in them.
	writes, handlers       *watchList
	writeItem, handlerItem watchItem

	mu sync.Mutex
	// inHeader: the header is awaited; headerExpired: for longer than
	// ReadHeaderTimeout. idleInHeader: IdleStreamTimeout, shorter than
	// that, applies to the header too.
	inHeader, headerExpired, idleInHeader bool
	// userRead and userWrite are the handler's deadlines.
	userRead, userWrite time.Time
	// idleRead is the read's idle deadline last armed.
	idleRead time.Time
	// sliceOver: the write's slice ended, and its deadline passed.
	sliceOver bool
	// armedRead and armedWrite are the stream's deadlines.
	armedRead, armedWrite time.Time
	// onReset, if set, runs with a nil cause when the guard resets the
	// stream: it ends the handler's context.
	onReset context.CancelCauseFunc
}

// initStreamGuard makes *g the guard of a request stream that just
// arrived.
func (s *Server) initStreamGuard(g *streamGuard, st *quic.Stream) {
	*g = streamGuard{
		st: st, readIdle: s.idleStreamTimeout(), writeIdle: s.responseStallTimeout(), counts: &s.counters, inHeader: true,
		writes: s.writes, handlers: s.handlers,
	}
	g.writeItem.g, g.handlerItem.g = g, g
	h := s.readHeaderTimeout()
	g.idleInHeader = g.readIdle > 0 && (h == 0 || g.readIdle < h)
}

// expireHeader makes the reads of a header still awaited fail at once:
// ReadHeaderTimeout passed.
func (g *streamGuard) expireHeader() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inHeader {
		g.headerExpired = true
		g.setReadDeadlineLocked(aLongTimeAgo)
	}
}

// headerRead ends the header phase.
func (g *streamGuard) headerRead() {
	g.mu.Lock()
	g.inHeader = false
	g.mu.Unlock()
}

// setOnReset sets what runs when the guard resets the stream.
func (g *streamGuard) setOnReset(f context.CancelCauseFunc) {
	g.mu.Lock()
	g.onReset = f
	g.mu.Unlock()
}

// Read reads from the stream within the deadlines.
func (g *streamGuard) Read(p []byte) (int, error) {
	g.armRead()
	n, err := g.st.Read(p)
	if err != nil && isDeadline(err) {
		err = g.readExpired()
	}
	return n, err
}

// SetReadDeadline sets the handler's read deadline; it applies to a
// read under way (http.ResponseController).
func (g *streamGuard) SetReadDeadline(t time.Time) error {
	g.mu.Lock()
	g.userRead = t
	g.mu.Unlock()
	g.armRead()
	return nil
}

// armRead sets the read's deadline: at once past for a header whose
// timeout passed; none for a header otherwise, unless the idle timeout
// is the shorter; the handler's or the idle one after that.
func (g *streamGuard) armRead() {
	g.mu.Lock()
	defer g.mu.Unlock()
	var dl time.Time
	switch {
	case g.inHeader && g.headerExpired:
		dl = aLongTimeAgo
	case g.inHeader && !g.idleInHeader:
	default:
		dl = earliest(g.userRead, g.moveIdleLocked(&g.idleRead, g.readIdle))
	}
	g.setReadDeadlineLocked(dl)
}

func (g *streamGuard) setReadDeadlineLocked(dl time.Time) {
	if !dl.Equal(g.armedRead) {
		g.armedRead = dl
		_ = g.st.SetReadDeadline(dl)
	}
}

// moveIdleLocked returns the idle deadline *dl, moved to 9/8 of the
// timeout d from now if less than d is left of it.
func (g *streamGuard) moveIdleLocked(dl *time.Time, d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	now := time.Now()
	if dl.Sub(now) < d {
		*dl = now.Add(d + d/8)
	}
	return *dl
}

// readExpired tells which deadline ended a read. The handler's gives
// os.ErrDeadlineExceeded; the server's reset the stream.
func (g *streamGuard) readExpired() error {
	g.mu.Lock()
	now := time.Now()
	var err *Error
	switch {
	case !g.userRead.IsZero() && !now.Before(g.userRead):
	case g.inHeader && g.headerExpired:
		g.counts.headerTimeouts.Add(1)
		err = streamError(ErrCodeRequestIncomplete, "no whole header before the header timeout")
	case g.readIdle > 0 && !now.Before(g.idleRead):
		g.counts.idleReads.Add(1)
		err = streamError(ErrCodeRequestIncomplete, "no request data for %v", g.readIdle)
	}
	g.mu.Unlock()
	if err == nil {
		// The handler's deadline, or one it moved since.
		return os.ErrDeadlineExceeded
	}
	g.reset(err.Code)
	return err
}

// reset ends both directions of the stream and the handler's context.
func (g *streamGuard) reset(code ErrCode) {
	g.st.CancelRead(quic.StreamErrorCode(code))
	g.st.CancelWrite(quic.StreamErrorCode(code))
	g.mu.Lock()
	f := g.onReset
	g.mu.Unlock()
	if f != nil {
		f(nil)
	}
}

// earliest returns the earlier of two deadlines, where zero is none.
func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}
