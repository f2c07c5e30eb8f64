package tunnel

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// givingSession is a Session that takes the buffers of the packets it is
// given, as a CONNECT-IP session over a QUIC connection does: it keeps
// each, with a copy of its bytes, until a later batch, then hands it back
// in exchange for a packet; in turn it also gives back nil and a buffer
// too small for a device read, which the forwarder must replace.
type givingSession struct {
	mu       sync.Mutex
	got      [][]byte // copies of the packets, in order
	held     [][]byte // buffers taken, not yet given back
	heldCopy [][]byte // their bytes when taken
	gaveBack map[*byte]bool
	reused   int // packets that came in a buffer given back
	turn     int
	done     chan struct{}
	once     sync.Once
}

func newGivingSession() *givingSession {
	return &givingSession{gaveBack: map[*byte]bool{}, done: make(chan struct{})}
}

func (s *givingSession) GivePackets(pkts [][]byte, _ func(int, []byte, error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.checkHeld(); err != nil {
		return err
	}
	for i, p := range pkts {
		if s.gaveBack[&p[:1][0]] {
			s.reused++
			delete(s.gaveBack, &p[:1][0])
		}
		s.got = append(s.got, bytes.Clone(p))
		var back []byte
		switch s.turn++; {
		case s.turn%7 == 0:
			back = nil
		case s.turn%11 == 0:
			back = make([]byte, 0, 100)
		case len(s.held) > 8:
			back = s.held[0][:0]
			s.held, s.heldCopy = s.held[1:], s.heldCopy[1:]
			s.gaveBack[&back[:1][0]] = true
		}
		s.held, s.heldCopy = append(s.held, p), append(s.heldCopy, bytes.Clone(p))
		pkts[i] = back
	}
	return nil
}

// checkHeld fails if a buffer taken was written to since.
func (s *givingSession) checkHeld() error {
	for i, b := range s.held {
		if !bytes.Equal(b, s.heldCopy[i]) {
			return errors.New("a buffer the session took was written to after it was given")
		}
	}
	return nil
}

func (s *givingSession) WritePackets([][]byte, func(int, []byte, error)) error {
	return errors.New("WritePackets on a session that takes buffers")
}

func (s *givingSession) WritePacket([]byte) ([]byte, error) {
	return nil, errors.New("WritePacket on a session that takes buffers")
}

func (s *givingSession) ReadPacket([]byte) (int, error) {
	<-s.done
	return 0, connectip.ErrClosed
}

func (s *givingSession) Close() error {
	s.once.Do(func() { close(s.done) })
	return connectip.ErrClosed
}

func (s *givingSession) Stats() connectip.Stats { return connectip.Stats{} }

// TestForwarderGivesBuffers: over a session that takes the buffers of
// the packets it sends, every packet read from the device reaches it
// once, in order and intact; the forwarder never writes into a buffer
// once given, reads the device into the buffers given back, and replaces
// those missing or too small.
func TestForwarderGivesBuffers(t *testing.T) {
	dev := tunneltest.BatchDevice{Device: tunneltest.NewDevice(1500), Batches: make(chan int, 4096)}
	dev.Inject = make(chan []byte, 4096)
	sess := newGivingSession()
	f := New(dev, sess, Config{QueueLen: 64, WaitWhenFull: true})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() { errs <- f.Run(ctx) }()
	const total = 3000
	for i := range total {
		dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100+i%1400, uint32(i))
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		sess.mu.Lock()
		n := len(sess.got)
		sess.mu.Unlock()
		if n == total {
			break
		}
		select {
		case err := <-errs:
			t.Fatalf("Run ended after %d packets: %v", n, err)
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d packets of %d reached the session", n, total)
		}
	}
	cancel()
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if err := sess.checkHeld(); err != nil {
		t.Fatal(err)
	}
	for i, p := range sess.got {
		if !bytes.Equal(p, ipv4Packet("10.8.0.2", "203.0.113.1", 100+i%1400, uint32(i))) {
			t.Fatalf("packet %d arrived as number %d or changed", i, binary.BigEndian.Uint32(p[len(p)-4:]))
		}
	}
	if sess.reused == 0 {
		t.Error("no device read went into a buffer the session gave back")
	}
}
