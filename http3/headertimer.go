package http3

import "time"

// The header timeout (ReadHeaderTimeout) of every request stream runs on
// one timer per Server rather than one per request: the streams whose
// header is awaited wait in requestMemory.reading in the order they
// arrived, so the first has the earliest deadline. The timer fires at
// it, tells each stream whose time is up, and moves on to the next
// first; a stream whose header was read left the queue already. A
// request then costs no timer for its header, which nearly always
// arrives with the stream.

// headerReader is what reads a header: *streamGuard.
type headerReader interface{ expireHeader() }

// armHeaderTimerLocked arms the timer for the first stream of the queue,
// unless it is armed already for that time or earlier.
func (m *requestMemory) armHeaderTimerLocked() {
	if m.headerTimeout <= 0 || m.reading.head == nil {
		return
	}
	at := m.reading.head.arrival.Add(m.headerTimeout)
	if !m.timerAt.IsZero() && !m.timerAt.After(at) {
		return
	}
	m.timerAt = at
	if m.timer == nil {
		m.timer = time.AfterFunc(time.Until(at), m.expireHeaders)
	} else {
		m.timer.Reset(time.Until(at))
	}
}

// expireHeaders takes the streams whose header timeout passed out of the
// queue, which makes them no longer evictable (they are on their way
// out), rearms the timer and tells each stream.
func (m *requestMemory) expireHeaders() {
	var due []*streamCharge
	m.mu.Lock()
	now := time.Now()
	for m.reading.head != nil {
		c := m.reading.head
		if now.Before(c.arrival.Add(m.headerTimeout)) {
			break
		}
		m.leaveReadingLocked(c)
		due = append(due, c)
	}
	m.timerAt = time.Time{}
	m.armHeaderTimerLocked()
	m.mu.Unlock()
	for _, c := range due {
		if c.reader != nil {
			c.reader.expireHeader()
		}
	}
}

// stopHeaderTimer stops the timer when the Server closes.
func (m *requestMemory) stopHeaderTimer() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.timer != nil {
		m.timer.Stop()
		m.timerAt = time.Time{}
	}
}
