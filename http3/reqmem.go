package http3

import (
	"errors"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// errNoMemory: a request stream's header or trailers could not grow, for
// its connection's MaxConnHeaderBytes or the Server's MaxRequestMemory
// is spent, or the stream was reset to make room for others.
var errNoMemory = errors.New("http3: request memory spent")

// readBufferCost is what a request stream is charged for its reader's
// buffer, which holds the header while it arrives, then body data.
const readBufferCost = streamReaderSize

// waitCost is what the server's budget is charged, besides the read
// buffer, for a request stream whose header is awaited: the goroutine
// that waits on it (its stack) and the stream's state in the QUIC layer,
// 7 KB together as measured with 20,000 silent streams. Counting it
// bounds what silent streams cost, not only their buffers.
const waitCost = 8 << 10

// streamCanceler resets both directions of a stream: *quic.Stream.
type streamCanceler interface {
	CancelRead(quic.StreamErrorCode)
	CancelWrite(quic.StreamErrorCode)
}

// requestMemory is a Server's budget of what its request streams hold:
// while a stream's header is awaited, its read buffer, waitCost, and the
// payload of a HEADERS frame larger than the buffer as it arrives; after
// that, the read buffer until the body was read or the handler returned,
// and trailers as they arrive. A frame's payload is charged as it is
// allocated, in chunks, not as its length announces: a client must send
// what it makes the server hold.
//
// The same lock guards each connection's connMemory, the bound on the
// header bytes its request streams buffer together: the read buffers of
// the streams whose header is awaited, and the payloads.
type requestMemory struct {
	limit int64 // negative: none
	stats *serverCounters
	// headerTimeout is ReadHeaderTimeout, 0 for none (headertimer.go).
	headerTimeout time.Duration

	mu   sync.Mutex
	used int64
	// reading holds the *streamCharge of the streams whose header is
	// being read, oldest first: those reset to make room, or when their
	// header timeout passes. evictable is their total charge.
	reading   chargeList
	evictable int64
	// timer expires the headers of reading; timerAt is when it fires,
	// zero if it is not armed.
	timer   *time.Timer
	timerAt time.Time
}

// connMemory bounds the header bytes of one connection's request
// streams; requestMemory.mu guards it.
type connMemory struct {
	limit int64 // negative: none
	used  int64
}

// streamCharge is what one request stream holds of the budgets.
type streamCharge struct {
	m    *requestMemory
	conn *connMemory
	st   streamCanceler

	// arrival is when the stream was opened; reader learns that its
	// header timeout passed.
	arrival time.Time
	reader  headerReader

	// The fields below are guarded by m.mu.
	// prev and next link c in m.reading while the header is read,
	// which listed says.
	prev, next *streamCharge
	listed     bool
	header     int64 // charged to conn and to m: header data
	held       int64 // charged to m alone
	// ended: released or evicted, c takes no more charges (a read that
	// outlived its handler must not charge what nothing will free).
	ended bool
}

func newRequestMemory(limit int64, headerTimeout time.Duration, stats *serverCounters) *requestMemory {
	return &requestMemory{limit: limit, headerTimeout: headerTimeout, stats: stats}
}

// open charges a new request stream its read buffer and waitCost, and
// reports false when the stream must be refused: its connection's bound
// or the server's budget is spent even after resetting the server's
// oldest incomplete headers. The reader, if not nil, learns when the
// header timeout passed.
func (m *requestMemory) open(conn *connMemory, st streamCanceler, reader headerReader) (*streamCharge, bool) {
	return m.openIn(new(streamCharge), conn, st, reader)
}

// openIn is open with the charge kept in c, which the caller allocated
// with the rest of the stream's state.
func (m *requestMemory) openIn(c *streamCharge, conn *connMemory, st streamCanceler, reader headerReader) (*streamCharge, bool) {
	*c = streamCharge{m: m, conn: conn, st: st, arrival: time.Now(), reader: reader}
	m.mu.Lock()
	victims, ok := m.reserveLocked(c, readBufferCost, waitCost)
	if ok {
		m.reading.pushBack(c)
		m.evictable += c.header + c.held
		m.armHeaderTimerLocked()
	}
	m.mu.Unlock()
	resetEvicted(victims)
	if !ok {
		m.stats.rejected.Add(1)
		return nil, false
	}
	return c, true
}

// grow charges n more header bytes to c, for a payload about to be
// allocated; errNoMemory means the stream must be reset.
func (c *streamCharge) grow(n int) error {
	m := c.m
	m.mu.Lock()
	ended := c.ended
	victims, ok := m.reserveLocked(c, int64(n), 0)
	if ok && c.listed {
		m.evictable += int64(n)
	}
	m.mu.Unlock()
	resetEvicted(victims)
	if !ok {
		if !ended {
			m.stats.overflowed.Add(1)
		}
		return errNoMemory
	}
	return nil
}

// reserveLocked charges n header bytes to c's connection and to the
// server, and extra to the server alone. When the server's budget alone
// is short, the oldest incomplete headers (c's excepted) are evicted, if
// that makes enough room; the caller resets the victims once the lock is
// released.
func (m *requestMemory) reserveLocked(c *streamCharge, n, extra int64) (victims []*streamCharge, ok bool) {
	if c.ended || (c.conn.limit >= 0 && c.conn.used+n > c.conn.limit) {
		return nil, false
	}
	need := n + extra
	if m.limit >= 0 && m.used+need > m.limit {
		others := m.evictable
		if c.listed {
			others -= c.header + c.held
		}
		if m.used+need-others > m.limit {
			return nil, false
		}
		for v := m.reading.head; m.used+need > m.limit; {
			next := v.next
			if v != c {
				m.evictLocked(v)
				victims = append(victims, v)
			}
			v = next
		}
	}
	c.conn.used += n
	m.used += need
	c.header += n
	c.held += extra
	return victims, true
}

// evictLocked takes back all that v holds; v's stream is reset after.
func (m *requestMemory) evictLocked(v *streamCharge) {
	m.releaseLocked(v)
	m.stats.evicted.Add(1)
}

// resetEvicted resets the streams evicted to make room. RFC 9114 section
// 4.1.1: H3_REQUEST_REJECTED tells the client that the request was not
// processed and may be sent again.
func resetEvicted(victims []*streamCharge) {
	for _, v := range victims {
		v.st.CancelRead(quic.StreamErrorCode(ErrCodeRequestRejected))
		v.st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestRejected))
	}
}

// headerDone ends the header phase: the stream can no longer be evicted,
// its header bytes leave its connection's bound and the server's budget,
// and the server's budget keeps only its read buffer, which a body may
// still use.
func (c *streamCharge) headerDone() {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.ended {
		return
	}
	m.leaveReadingLocked(c)
	c.conn.used -= c.header
	m.used -= c.header + c.held - readBufferCost
	c.header, c.held = 0, readBufferCost
}

// trailersDone frees what trailers took.
func (c *streamCharge) trailersDone() {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	c.conn.used -= c.header
	m.used -= c.header
	c.header = 0
}

// release frees all that c holds, for good; it may be called more than
// once.
func (c *streamCharge) release() {
	c.m.mu.Lock()
	c.m.releaseLocked(c)
	c.m.mu.Unlock()
}

func (m *requestMemory) releaseLocked(c *streamCharge) {
	m.leaveReadingLocked(c)
	c.conn.used -= c.header
	m.used -= c.header + c.held
	c.header, c.held = 0, 0
	c.ended = true
}

func (m *requestMemory) leaveReadingLocked(c *streamCharge) {
	if c.listed {
		m.reading.remove(c)
		m.evictable -= c.header + c.held
	}
}

// snapshot returns the bytes charged and the streams whose header is
// being read.
func (m *requestMemory) snapshot() (used int64, reading int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used, m.reading.n
}

// chargeList is a list of the streams whose header is being read, oldest
// first, linked through their charges: joining and leaving it allocates
// nothing.
type chargeList struct {
	head, tail *streamCharge
	n          int
}

func (l *chargeList) pushBack(c *streamCharge) {
	c.prev, c.next, c.listed = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = c
	} else {
		l.head = c
	}
	l.tail = c
	l.n++
}

func (l *chargeList) remove(c *streamCharge) {
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.head = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.tail = c.prev
	}
	c.prev, c.next, c.listed = nil, nil, false
	l.n--
}
