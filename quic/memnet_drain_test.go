package quic

import (
	"testing"
	"testing/synctest"
	"time"
)

// drainedConn connects, lets the client close the connection, and returns
// the server's connection once its goroutine handed it to the Transport
// to drain (transport_drain.go), and when that was.
func drainedConn(t *testing.T, e *memEnv) (*Conn, time.Time) {
	t.Helper()
	c, s := e.connect(nil)
	if err := c.CloseWithError(0, ""); err != nil {
		t.Fatal(err)
	}
	<-s.Context().Done()
	synctest.Wait()
	if st := s.loop.Load(); st != loopDrained {
		t.Fatalf("loop state %d after the peer's close, want loopDrained", st)
	}
	return s, time.Now()
}

// TestDrainWithoutGoroutine: a server connection whose client closed it
// keeps no goroutine while it drains, keeps its routes for the period,
// so that late packets are dropped rather than reset, and ends at the
// end of the period, three probe timeouts and at most a drainTick later
// (RFC 9000 section 10.2.2).
func TestDrainWithoutGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		s, drained := drainedConn(t, e)
		e.server.mu.RLock()
		_, listed := e.server.conns[s]
		routes := 0
		for _, rc := range e.server.routes {
			if rc == s {
				routes++
			}
		}
		e.server.mu.RUnlock()
		if !listed || routes == 0 {
			t.Fatalf("draining connection: listed %v, %d routes", listed, routes)
		}
		// The probe timeout of RFC 9002 section 6.2.1 with the
		// client's max_ack_delay, the default.
		st := s.Stats()
		pto := st.SmoothedRTT + max(4*st.RTTVariance, time.Millisecond) + 25*time.Millisecond
		<-s.loopDone
		took := time.Since(drained)
		if took < 3*pto-time.Millisecond || took > 3*pto+drainTick+time.Millisecond {
			t.Errorf("drained for %v, three probe timeouts are %v", took, 3*pto)
		}
		e.server.mu.RLock()
		_, listed = e.server.conns[s]
		left := 0
		for _, rc := range e.server.routes {
			if rc == s {
				left++
			}
		}
		e.server.mu.RUnlock()
		if listed || left != 0 {
			t.Errorf("ended connection: listed %v, %d routes left", listed, left)
		}
	})
}

// TestTransportCloseEndsDraining: closing the Transport ends its
// draining connections at once rather than after their period.
func TestTransportCloseEndsDraining(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		s, drained := drainedConn(t, e)
		if err := e.server.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.loopDone:
		default:
			t.Fatal("draining connection still open after the Transport closed")
		}
		if d := time.Since(drained); d != 0 {
			t.Errorf("Close took %v", d)
		}
	})
}

// TestClosingAnswersWithoutGoroutine: a client that closed hands its
// connection to the Transport once its CONNECTION_CLOSE went out, and a
// packet the server sent before it learned of the close gets the
// CONNECTION_CLOSE again from the reader (RFC 9000 section 10.2.1).
func TestClosingAnswersWithoutGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(nil)
		sst, err := s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CloseWithError(0, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if st := c.loop.Load(); st != loopDrained || !c.answersPeer {
			t.Fatalf("client loop state %d after its close, want loopDrained", st)
		}
		sent := c.Stats().DatagramsSent
		// The server writes before the CONNECTION_CLOSE reaches it.
		if _, err := sst.Write([]byte("late")); err != nil {
			t.Fatal(err)
		}
		// Its packets reach the client a one-way delay later.
		time.Sleep(50 * time.Millisecond)
		synctest.Wait()
		if got := c.Stats().DatagramsSent; got == sent {
			t.Error("the client did not answer the server's packet while closing")
		}
		if st := c.loop.Load(); st != loopDrained {
			t.Errorf("client loop state %d after its answer, want loopDrained", st)
		}
		<-c.loopDone
	})
}
