package rtio

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Priority is how a packet thread asks to be scheduled.
type Priority int

const (
	// Realtime asks for SCHED_FIFO at a low real-time priority, falling
	// back to nice -20 where real-time scheduling is not allowed. On a
	// machine whose cores are kept busy by other processes an ordinary
	// thread, even at nice -20, was measured to wait up to 100 ms to run
	// after its timer fired; a real-time one, a few milliseconds at worst.
	// The emulator's threads use it.
	Realtime Priority = iota
	// Nice asks for nice -20 only. A process with several real-time
	// threads of its own beside the emulator's (the probe's tests run both
	// in one process) was measured to stall for 50-60 ms at times; a
	// measuring tool at nice -20 beside a real-time emulator does not, and
	// never takes the CPU from the emulator it measures.
	Nice
)

// Priority 10 of 1..99 stays below the kernel's own real-time threads.
const (
	realtimePriority = 10
	highNice         = -20
)

// LockThread wires the calling goroutine to its OS thread for good and
// raises that thread's priority, so that it runs as soon as the packet or
// timer it waits for is there. Without privileges the priority stays as
// it was; the result says whether it was raised.
//
// A high-priority thread must not wait for Go's scheduler, whose threads
// are ordinary ones that a busy machine delays: it must not block on
// channels or contended mutexes in its loop (see SpinLock), only in system
// calls. The goroutine must never unlock the thread either, or its
// priority would leak to other goroutines; the thread exits with the
// goroutine. Threads the runtime starts later are made by its template
// thread, so they do not inherit the priority.
func LockThread(p Priority) bool {
	runtime.LockOSThread()
	// Timer slack defaults to 50 us; 1 us keeps sleeps tight.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	if p == Realtime {
		param := struct{ priority int32 }{realtimePriority}
		_, _, errno := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, unix.SCHED_FIFO, uintptr(unsafe.Pointer(&param)))
		if errno == 0 {
			return true
		}
	}
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), highNice) == nil
}
