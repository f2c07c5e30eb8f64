package http3

import (
	"sync"
	"time"
)

// workerPool runs a server's request handlers on goroutines that outlive
// a request and take the next one. A new goroutine starts with a small
// stack, and on its way through a request (reading the HEADERS frame,
// QPACK, the handler, the response) grows it by copying, twice or more:
// under load that copying was an eighth of the server's CPU. A goroutine
// that served a request already has the stack the next one needs.
//
// An idle goroutine waits on a channel of its own, on a list under the
// pool's lock, and run hands the next request to the one that idled
// last. Idle goroutines end between workerIdle and twice that after their
// last request, at the first sweep that finds them idle since the sweep
// before, so that a burst leaves none behind for long; they end at once
// when the pool closes. The sweeps are one timer for the pool, armed
// while goroutines are idle: a timer per goroutine, reset at every
// request, and a select on it, on the work and on the server's end, cost
// a loaded server a twentieth of its CPU, much of it on the locks of the
// channels every goroutine shared.
type workerPool struct {
	mu     sync.Mutex
	idle   []*worker // in the order they idled: the longest idle first
	closed bool
	sweeps uint64      // sweeps so far
	timer  *time.Timer // the next sweep, armed while idle is not empty
	armed  bool
}

// worker is an idle goroutine's place in the pool.
type worker struct {
	next chan task // the next request, or nil to end; never more than one
	// idleAt is the pool's sweep count when the goroutine idled.
	idleAt uint64
}

// task is a piece of work for the pool: a request stream to serve. An
// interface rather than a func, so that handing a stream over allocates
// no closure.
type task interface{ run() }

// workerIdle is how long a goroutine waits for the next request at least
// before it ends.
const workerIdle = 5 * time.Second

func newWorkerPool() *workerPool {
	return &workerPool{}
}

// run runs f on an idle goroutine of the pool, or on a new one when none
// is idle; it never waits.
func (p *workerPool) run(f task) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.next <- f
		return
	}
	p.mu.Unlock()
	go p.loop(&worker{next: make(chan task, 1)}, f)
}

// loop runs f, then whatever run hands it, until the pool ends it.
func (p *workerPool) loop(w *worker, f task) {
	for f != nil {
		f.run()
		if !p.park(w) {
			return
		}
		f = <-w.next
	}
}

// park lists w as idle; false once the pool closed.
func (p *workerPool) park(w *worker) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	w.idleAt = p.sweeps
	p.idle = append(p.idle, w)
	if !p.armed {
		p.armed = true
		if p.timer == nil {
			p.timer = time.AfterFunc(workerIdle, p.sweep)
		} else {
			p.timer.Reset(workerIdle)
		}
	}
	return true
}

// sweep ends the goroutines idle since before the previous sweep, a
// workerIdle or more, and arms the next sweep while others are idle.
func (p *workerPool) sweep() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.sweeps++
	// The list is in the order the goroutines idled, so those to end
	// are its first ones.
	k := 0
	for k < len(p.idle) && p.idle[k].idleAt+2 <= p.sweeps {
		p.idle[k].next <- nil
		k++
	}
	n := copy(p.idle, p.idle[k:])
	clear(p.idle[n:])
	p.idle = p.idle[:n]
	p.armed = n > 0
	if p.armed {
		p.timer.Reset(workerIdle)
	}
}

// close ends the idle goroutines, and the others once their request is
// done.
func (p *workerPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.closed = true
	for _, w := range p.idle {
		w.next <- nil
	}
	p.idle = nil
	if p.timer != nil {
		p.timer.Stop()
	}
}
