// Package connectiptest provides an in-memory connectip.Carrier pair, for
// tests of CONNECT-IP sessions and of what runs on them without HTTP/3: a
// buffered capsule byte stream each way and a datagram queue each way,
// with optional seeded loss and reordering of datagrams; and an End that
// lends its datagrams in buffers of its own, as an HTTP/3 stream does.
package connectiptest

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"sync"

	"github.com/satquic/satquic/connectip"
)

// ErrClosed is returned by an End's methods once the pair is closed.
var ErrClosed = errors.New("connectiptest: carrier closed")

// Config sets the datagram paths' behaviour; the zero value is a lossless,
// in-order pair.
type Config struct {
	// Loss is the probability that a datagram is lost.
	Loss float64
	// Reorder is the probability that a datagram is held back and delivered
	// after the next one.
	Reorder float64
	// Seed seeds the loss and reordering draws.
	Seed uint64
	// QueueLen is how many datagrams each direction holds before
	// SendDatagram blocks, as a transport that cannot send faster would.
	// Zero means 256.
	QueueLen int
}

// End is one end of the pair.
type End struct {
	in     *stream // what this end reads
	out    *stream // what the peer reads
	recv   chan []byte
	send   chan []byte
	shared *pairState

	mu   sync.Mutex
	held []byte // a datagram held back to be reordered
}

var _ connectip.Carrier = (*End)(nil)

type pairState struct {
	done chan struct{}
	once sync.Once

	mu  sync.Mutex
	rng *rand.Rand
	cfg Config
}

// Pipe returns the two ends of a carrier pair.
func Pipe(cfg Config) (*End, *End) {
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = 256
	}
	st := &pairState{done: make(chan struct{}), cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}
	ab, ba := newStream(st.done), newStream(st.done)
	qa, qb := make(chan []byte, cfg.QueueLen), make(chan []byte, cfg.QueueLen)
	a := &End{in: ba, out: ab, recv: qa, send: qb, shared: st}
	b := &End{in: ab, out: ba, recv: qb, send: qa, shared: st}
	return a, b
}

// Read reads the capsule stream the peer wrote; after Close it returns
// io.EOF once what was written is read.
func (e *End) Read(p []byte) (int, error) { return e.in.read(p) }

// Write appends to the peer's capsule stream.
func (e *End) Write(p []byte) (int, error) { return e.out.write(p) }

// Close closes the pair: both streams end and datagrams stop.
func (e *End) Close() error {
	e.shared.once.Do(func() { close(e.shared.done) })
	e.in.wake()
	e.out.wake()
	return nil
}

// SendDatagram queues a copy of b for the peer, after the loss and
// reordering draws, blocking while the peer's queue is full.
func (e *End) SendDatagram(b []byte) error {
	lost, hold := e.shared.draw()
	if lost {
		return e.checkOpen()
	}
	d := append([]byte(nil), b...)
	e.mu.Lock()
	if hold && e.held == nil {
		e.held = d
		e.mu.Unlock()
		return e.checkOpen()
	}
	held := e.held
	e.held = nil
	e.mu.Unlock()
	if err := e.enqueue(d); err != nil {
		return err
	}
	if held != nil {
		return e.enqueue(held)
	}
	return nil
}

func (e *End) enqueue(d []byte) error {
	select {
	case e.send <- d:
		return nil
	case <-e.shared.done:
		return ErrClosed
	}
}

func (e *End) checkOpen() error {
	select {
	case <-e.shared.done:
		return ErrClosed
	default:
		return nil
	}
}

// TryReceiveDatagram returns the next datagram from the peer if one has
// arrived, without waiting.
func (e *End) TryReceiveDatagram() ([]byte, bool) {
	select {
	case d := <-e.recv:
		return d, true
	default:
		return nil, false
	}
}

// ReceiveDatagram returns the next datagram from the peer.
func (e *End) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	select {
	case d := <-e.recv:
		return d, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-e.shared.done:
		return nil, ErrClosed
	}
}

// draw decides a datagram's fate.
func (st *pairState) draw() (lost, hold bool) {
	if st.cfg.Loss == 0 && st.cfg.Reorder == 0 {
		return false, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.rng.Float64() < st.cfg.Loss, st.rng.Float64() < st.cfg.Reorder
}

// stream is one direction of the capsule byte stream: an unbounded buffer,
// so that a writer never waits for the reader.
type stream struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	done chan struct{}
}

func newStream(done chan struct{}) *stream {
	s := &stream{done: done}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *stream) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *stream) read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf) == 0 {
		if s.closed() {
			return 0, io.EOF
		}
		s.cond.Wait()
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

func (s *stream) write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed() {
		return 0, ErrClosed
	}
	s.buf = append(s.buf, p...)
	s.cond.Broadcast()
	return len(p), nil
}

func (s *stream) wake() {
	s.mu.Lock()
	s.cond.Broadcast()
	s.mu.Unlock()
}
