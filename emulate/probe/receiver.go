//go:build linux

package probe

import (
	"time"

	"github.com/satquic/satquic/emulate/internal/batchio"
	"github.com/satquic/satquic/emulate/internal/rtio"
)

// arrival is one datagram received.
type arrival struct {
	seq uint64
	// sent and at are times since the probe's epoch.
	sent, at time.Duration
}

// receiver collects arrivals on a high-priority thread until stopped.
type receiver struct {
	poller       *rtio.Poller
	done         chan struct{}
	arrivals     []arrival
	highPriority bool
	err          error
}

func startReceiver(c *batchio.Conn, clk rtio.Clock, expect int, prio rtio.Priority) (*receiver, error) {
	fd, err := c.FD()
	if err != nil {
		return nil, err
	}
	p, err := rtio.NewPoller()
	if err != nil {
		return nil, err
	}
	if err := p.Add(fd, 0); err != nil {
		p.Close()
		return nil, err
	}
	r := &receiver{poller: p, done: make(chan struct{}), arrivals: make([]arrival, 0, expect+expect/8)}
	started := make(chan struct{})
	go r.run(c, clk, prio, started)
	<-started
	return r, nil
}

func (r *receiver) run(c *batchio.Conn, clk rtio.Clock, prio rtio.Priority, started chan<- struct{}) {
	defer close(r.done)
	r.highPriority = rtio.LockThread(prio)
	close(started)
	msgs := make([]batchio.Message, 64)
	for i := range msgs {
		msgs[i].Buf = make([]byte, 65536)
	}
	for {
		if _, stopped, err := r.poller.Wait(); stopped || err != nil {
			r.err = err
			return
		}
		n, err := c.TryReadBatch(msgs)
		if err != nil {
			continue
		}
		now := clk.Now()
		for _, m := range msgs[:n] {
			if seq, sent, ok := parse(m.Buf[:m.N]); ok {
				r.arrivals = append(r.arrivals, arrival{seq: seq, sent: sent, at: now})
			}
		}
	}
}

// stop ends the receiver and waits for it; arrivals is then complete.
func (r *receiver) stop() {
	r.poller.Stop()
	<-r.done
	r.poller.Close()
}
