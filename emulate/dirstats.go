//go:build linux

package emulate

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/emulate/internal/rtio"
	"github.com/satquic/satquic/netsim"
)

// dirStats are the emulator's own counters for one direction, beside the
// link model's: what it handed to the kernel, what it could not, and how
// late.
type dirStats struct {
	sentPackets    atomic.Uint64
	sentBytes      atomic.Uint64
	late           atomic.Uint64
	sendErrors     atomic.Uint64
	undeliverable  atomic.Uint64
	oversize       atomic.Uint64
	internalErrors atomic.Uint64
	// Packet threads of this direction (ingress and sender), and how many
	// of them got high priority.
	threads, priorityThreads atomic.Int32

	mu       sync.Mutex
	lateness hist // how long after its due time each packet left
	sojourn  hist // arrival to departure, where the arrival time is known
}

func newDirStats() *dirStats { return &dirStats{} }

// leaving records the lateness of a batch about to be written at now.
func (s *dirStats) leaving(now time.Duration, batch []netsim.Delivery) {
	rtio.SpinLock(&s.mu)
	defer s.mu.Unlock()
	for _, dl := range batch {
		late := now - dl.At
		s.lateness.add(late)
		if late > LateThreshold {
			s.late.Add(1)
		}
	}
}

// sent counts a packet handed to the kernel.
func (s *dirStats) sent(size int) {
	s.sentPackets.Add(1)
	s.sentBytes.Add(uint64(size))
}

func (s *dirStats) sojournOf(d time.Duration) {
	rtio.SpinLock(&s.mu)
	s.sojourn.add(d)
	s.mu.Unlock()
}

func (s *dirStats) threadStarted(highPriority bool) {
	s.threads.Add(1)
	if highPriority {
		s.priorityThreads.Add(1)
	}
}

func (s *dirStats) sendError()     { s.sendErrors.Add(1) }
func (s *dirStats) unroutable()    { s.undeliverable.Add(1) }
func (s *dirStats) tooBig()        { s.oversize.Add(1) }
func (s *dirStats) internalError() { s.internalErrors.Add(1) }
