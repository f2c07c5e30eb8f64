package tunnel

import (
	"context"
	"errors"
	"sync"
)

// sessionGate is a lane's current session as the device reader sees it:
// ended is closed when the session fails, so that a reader waiting for
// room in the queue (Config.WaitWhenFull) stops waiting and drops.
type sessionGate struct {
	ended chan struct{}
}

// runSeries runs the lane over one session after the other
// (Config.NextSession) until ctx ends or NextSession fails. The device
// reader runs all along; each session has its own sender and receiver.
func (f *Forwarder) runSeries(ctx context.Context, l *lane) error {
	sess := l.session()
	for {
		lost := f.runSession(ctx, l, sess)
		if ctx.Err() != nil {
			return nil
		}
		f.stats.lost.Add(1)
		next, err := f.next(ctx, lost)
		if ctx.Err() != nil {
			if next != nil {
				_ = next.Close()
			}
			return nil
		}
		if err != nil {
			return err
		}
		if next == nil {
			return errors.New("tunnel: NextSession returned no session")
		}
		sess = next
	}
}

// runSession forwards between the device and sess until sess fails or
// ctx ends, then closes sess and returns the failure. Packets still
// queued for sess are dropped as the link's: they would reach the next
// session late, after their senders' retransmissions.
func (f *Forwarder) runSession(ctx context.Context, l *lane, sess Session) error {
	l.mu.Lock()
	l.sess = sess
	l.mu.Unlock()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Run opened the first session's gate before the device reader
	// started, so that none of the first packets is taken for one read
	// while down.
	gate := l.gate.Load()
	if gate == nil {
		gate = &sessionGate{ended: make(chan struct{})}
		l.gate.Store(gate)
	}

	errc := make(chan error, 2)
	var wg sync.WaitGroup
	// The error goes into errc before cancel: the first one there is
	// what ended the session.
	wg.Go(func() { errc <- f.sendPackets(sctx, l, sess); cancel() })
	wg.Go(func() { errc <- f.receivePackets(sess); cancel() })
	<-sctx.Done()

	l.gate.Store(nil)
	close(gate.ended)
	_ = sess.Close() // unblocks the receiver; the session is gone either way
	wg.Wait()
	f.drainQueue(l)
	close(errc)
	for err := range errc {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// drainQueue drops the packets queued on a lane whose session ended.
func (f *Forwarder) drainQueue(l *lane) {
	for {
		select {
		case p := <-l.queue:
			f.dropDown(p.buf)
		default:
			return
		}
	}
}

// dropDown drops a packet read from the device while no session is up.
func (f *Forwarder) dropDown(buf []byte) {
	f.stats.down.Add(1)
	f.free.put(buf)
}
