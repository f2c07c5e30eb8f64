//go:build linux

package rtio

import (
	"sync"

	"golang.org/x/sys/unix"
)

// spinTries bounds how long SpinLock spins before it gives up and parks:
// a few hundred microseconds, far longer than any critical section two
// packet threads share, far shorter than a scheduling delay.
const spinTries = 2000

// SpinLock locks mu from a high-priority thread. A goroutine that parks on
// a contended mutex is woken through Go's scheduler, whose ordinary
// threads a busy machine can delay by tens of milliseconds; spinning keeps
// the wait between the two threads that share the lock. Only when the
// holder stays away (an ordinary goroutine taking a statistics snapshot,
// descheduled) does it fall back to parking.
func SpinLock(mu *sync.Mutex) {
	for i := range spinTries {
		if mu.TryLock() {
			return
		}
		if i >= 16 {
			yieldThread()
		}
	}
	mu.Lock()
}

// SpinRLock is SpinLock for the read side of an RWMutex.
func SpinRLock(mu *sync.RWMutex) {
	for i := range spinTries {
		if mu.TryRLock() {
			return
		}
		if i >= 16 {
			yieldThread()
		}
	}
	mu.RLock()
}

// yieldThread gives the CPU to another runnable thread of the same
// priority, without entering Go's scheduler (the goroutine keeps its
// thread and its P).
func yieldThread() {
	_, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
}
