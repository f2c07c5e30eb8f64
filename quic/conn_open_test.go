package quic

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestOpenStreamSyncInLine: calls waiting for stream credit open their
// streams in the order they came, a call whose context ends leaves the
// line without taking the credit of the calls behind it, and the
// connection's end wakes the calls still waiting with its error.
func TestOpenStreamSyncInLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxIncomingStreams: 2})
		c, s := e.connect(nil)
		ctx := context.Background()
		// The server holds each stream until told, then ends it.
		release := make(chan struct{})
		go func() {
			for {
				st, err := s.AcceptStream(ctx)
				if err != nil {
					return
				}
				go func() {
					<-release
					_, _ = io.Copy(io.Discard, st)
					_ = st.Close()
				}()
			}
		}()
		for range 2 {
			st, err := c.OpenStreamSync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			_ = st.Close()
		}
		// Six calls wait in line, the third with a context that ends.
		const waiting = 6
		ids := make([]int64, waiting)
		errs := make([]error, waiting)
		var wg sync.WaitGroup
		cctx, cancel := context.WithCancel(ctx)
		for i := range waiting {
			callCtx := ctx
			if i == 2 {
				callCtx = cctx
			}
			wg.Go(func() {
				st, err := c.OpenStreamSync(callCtx)
				errs[i] = err
				if err == nil {
					ids[i] = int64(st.StreamID())
					_ = st.Close()
				}
			})
			synctest.Wait() // in line before the next
		}
		cancel()
		synctest.Wait()
		if !errors.Is(errs[2], context.Canceled) {
			t.Errorf("the canceled call: %v", errs[2])
		}
		// The two streams end: MAX_STREAMS lets two more open, the
		// first two in line (which of them runs first takes the lower
		// ID); their streams end too, and so on.
		close(release)
		wg.Wait()
		for i := range waiting {
			if i != 2 && errs[i] != nil {
				t.Errorf("call %d: %v", i, errs[i])
			}
		}
		if max(ids[0], ids[1]) != 12 || min(ids[0], ids[1]) != 8 || max(ids[3], ids[4]) != 20 || min(ids[3], ids[4]) != 16 || ids[5] != 24 {
			t.Errorf("streams %v of the calls in line (the third canceled), want 8 and 12, 16 and 20, then 24", ids)
		}

		// With the credit used up again, a waiting call learns of the
		// connection's end.
		held := make(chan struct{})
		go func() {
			for range 2 {
				if _, err := c.OpenStreamSync(ctx); err != nil {
					t.Error(err)
				}
			}
			close(held)
		}()
		<-held
		done := make(chan error, 1)
		go func() {
			_, err := c.OpenStreamSync(ctx)
			done <- err
		}()
		synctest.Wait()
		_ = c.CloseWithError(0, "")
		select {
		case err := <-done:
			if err == nil {
				t.Error("a call waiting for credit opened a stream after the close")
			}
		case <-time.After(time.Second):
			t.Error("a call waiting for credit did not return after the close")
		}
	})
}

// TestOpenStreamSyncWaiterReused: a call whose context ends as it is
// woken leaves the line with its waiter's channel empty and the count of
// woken calls right, whichever of the two its wait saw first (the first
// event readies the waiting goroutine with its case), so that the waiter
// serves the next call as a new one would.
func TestOpenStreamSyncWaiterReused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxIncomingStreams: 1})
		c, _ := e.connect(nil)
		// A failure ends the test at once: the connection goes too.
		defer func() { _ = c.CloseWithError(0, "") }()
		if _, err := c.OpenStreamSync(context.Background()); err != nil {
			t.Fatal(err)
		}
		q := &c.opening[0]
		for round := range 20 {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := c.OpenStreamSync(ctx)
				done <- err
			}()
			synctest.Wait()
			// Both before the call looks again, under the lock, in
			// turns one first, then the other.
			c.mu.Lock()
			if n := len(q.waiting); n != 1 {
				c.mu.Unlock()
				t.Fatalf("round %d: %d calls in line, want 1", round, n)
			}
			if round%2 == 0 {
				q.wake(1)
				cancel()
			} else {
				cancel()
				q.wake(1)
			}
			c.mu.Unlock()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("round %d: %v, want context.Canceled", round, err)
			}
			c.mu.Lock()
			waiting, woken, spares, tokens := len(q.waiting), q.woken, len(q.spare), -1
			if spares > 0 {
				tokens = len(q.spare[0].ready)
			}
			c.mu.Unlock()
			if waiting != 0 || woken != 0 || spares != 1 || tokens != 0 {
				t.Fatalf("round %d: %d in line, %d woken, %d spares (the first holding %d tokens), want 0, 0, 1 and 0",
					round, waiting, woken, spares, tokens)
			}
		}
	})
}
