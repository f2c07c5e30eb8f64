//go:build linux

package emulate

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/satquic/satquic/emulate/internal/rtio"
	"github.com/satquic/satquic/netsim"
)

// LateThreshold is how far past its due time a packet may leave before the
// emulator counts it as late: the emulator's own timing budget.
const LateThreshold = time.Millisecond

// coalesce is the shortest time between two wake-ups of a sender while
// packets are due back to back: at 1 Gbit/s a 1500-byte packet is due
// every 12 microseconds, and waking for each would cost more CPU than the
// rest of the emulator. A packet leaves at most this much after its due
// time because of it, far inside LateThreshold.
const coalesce = 50 * time.Microsecond

// never is the alarm time of a direction with nothing in flight.
const never = time.Duration(math.MaxInt64)

// sink puts the packets a model delivered onto the wire. It is called from
// the direction's sender goroutine only, and takes back the packets'
// buffers.
type sink interface {
	send(batch []netsim.Delivery)
}

// direction carries packets one way through a link model in real time. Readers
// call offer from any goroutine; one sender goroutine sleeps on the alarm
// until the model's next due time and hands what is due to the sink.
type direction struct {
	name  string
	clk   rtio.Clock
	sink  sink
	stats *dirStats

	mu     sync.Mutex
	link   *netsim.Link
	alarm  *alarm
	poller *rtio.Poller  // the sender waits on the alarm with it
	armed  time.Duration // when the alarm rings, or never
	last   time.Duration // latest time given to the model: it never goes back
	woke   time.Duration // when the sender last delivered
	closed bool
	drops  dropLog

	batch []netsim.Delivery // sender goroutine only
	done  chan struct{}
}

func newDirection(name string, clk rtio.Clock, cfg netsim.LinkConfig, out sink) (*direction, error) {
	link, err := netsim.NewLink(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	a, err := newAlarm(clk)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p, err := rtio.NewPoller()
	if err != nil {
		a.close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := p.Add(a.fd, 0); err != nil {
		a.close()
		p.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d := &direction{
		name: name, clk: clk, sink: out, stats: newDirStats(),
		link: link, alarm: a, poller: p, armed: never, done: make(chan struct{}),
	}
	started := make(chan struct{})
	go d.run(started)
	<-started
	return d, nil
}

// advance returns the current time, never earlier than a time already
// given to the model (readers and the sender take turns under mu).
func (d *direction) advance() time.Duration {
	d.last = max(d.last, d.clk.Now())
	return d.last
}

// offer hands packets that arrived just now to the model, which owns them
// from here on.
func (d *direction) offer(pkts [][]byte) {
	rtio.SpinLock(&d.mu)
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	now := d.advance()
	for _, p := range pkts {
		was := countsOfLink(d.link)
		d.link.Offer(now, p)
		d.drops.noteOffer(now, d.name == "uplink", len(p), was, countsOfLink(d.link))
	}
	// Wake the sender early only if a packet is now due before the time it
	// sleeps to; otherwise it will find the packet when it wakes.
	if next, ok := d.link.Next(); ok {
		if at := max(next, d.woke+coalesce); at < d.armed {
			d.arm(at)
		}
	}
}

func (d *direction) arm(at time.Duration) {
	var err error
	if at == never {
		err = d.alarm.clear()
	} else {
		err = d.alarm.set(at)
	}
	if err != nil {
		d.stats.internalError()
		return
	}
	d.armed = at
}

// run is the sender: a high-priority thread that sleeps until the alarm rings
// and sends what is due.
func (d *direction) run(started chan<- struct{}) {
	d.stats.threadStarted(rtio.LockThread(rtio.Realtime))
	close(started)
	defer close(d.done)
	defer d.poller.Close()
	defer d.alarm.close()
	for {
		_, stopped, err := d.poller.Wait()
		if stopped || err != nil {
			return
		}
		d.alarm.drain()
		d.deliverDue()
	}
}

// deliverDue takes every packet due by now out of the model, re-arms the
// alarm for the next one, and sends the batch outside the lock.
func (d *direction) deliverDue() {
	rtio.SpinLock(&d.mu)
	now := d.advance()
	batch := d.batch[:0]
	for {
		dl, ok := d.link.Deliver(now)
		if !ok {
			break
		}
		batch = append(batch, dl)
	}
	d.woke = now
	next, ok := d.link.Next()
	if !ok {
		next = never
	}
	d.arm(max(next, now+coalesce))
	d.mu.Unlock()

	if len(batch) > 0 {
		d.stats.leaving(d.clk.Now(), batch)
		d.sink.send(batch)
	}
	clear(batch) // drop references to buffers the sink has taken back
	d.batch = batch[:0]
}

// linkStats returns the link model's counters.
func (d *direction) linkStats() netsim.LinkStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.link.Stats()
}

// dropsSoFar returns a copy of the drops recorded, and whether some were
// not for want of room.
func (d *direction) dropsSoFar() ([]Drop, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Drop(nil), d.drops.drops...), d.drops.full
}

// close stops the sender goroutine and waits for it. Packets still in the
// model are dropped.
func (d *direction) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.poller.Stop()
	<-d.done
}
