package http3

import "time"

// workerPool runs a server's request handlers on goroutines that outlive
// a request and take the next one. A new goroutine starts with a small
// stack, and on its way through a request (reading the HEADERS frame,
// QPACK, the handler, the response) grows it by copying, twice or more:
// under load that copying was an eighth of the server's CPU. A goroutine
// that served a request already has the stack the next one needs.
//
// Idle goroutines wait at most workerIdle for work, so that a burst
// leaves none behind for long, and end at once when the server closes.
type workerPool struct {
	work chan task
	quit <-chan struct{}
}

// task is a piece of work for the pool: a request stream to serve. An
// interface rather than a func, so that handing a stream over allocates
// no closure.
type task interface{ run() }

// workerIdle is how long a goroutine waits for the next request before
// it ends.
const workerIdle = 5 * time.Second

// newWorkerPool makes a pool whose idle goroutines end when quit closes.
func newWorkerPool(quit <-chan struct{}) *workerPool {
	return &workerPool{work: make(chan task), quit: quit}
}

// run runs f on an idle goroutine of the pool, or on a new one when none
// is idle; it never waits.
func (p *workerPool) run(f task) {
	select {
	case p.work <- f:
	default:
		go p.loop(f)
	}
}

// loop runs f, then whatever run hands it, until it idled for workerIdle.
func (p *workerPool) loop(f task) {
	var idle *time.Timer
	for {
		f.run()
		f = nil
		if idle == nil {
			idle = time.NewTimer(workerIdle)
		} else {
			idle.Reset(workerIdle)
		}
		select {
		case f = <-p.work:
		case <-idle.C:
			return
		case <-p.quit:
			idle.Stop()
			return
		}
	}
}
