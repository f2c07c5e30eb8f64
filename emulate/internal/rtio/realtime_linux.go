package rtio

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// realtimePriority is the SCHED_FIFO priority of the emulator's packet
// threads: low among real-time priorities (1..99), so kernel threads that
// run at 50 keep precedence, but above every ordinary process.
const realtimePriority = 10

// LockRealtimeThread wires the calling goroutine to its OS thread for good
// and asks for SCHED_FIFO scheduling, so that the thread runs as soon as
// the packet or the timer it waits for is there, even on a machine busy
// with other work. Under the default scheduler a busy machine delays such a
// wake-up by many milliseconds. Without privileges the request fails and
// the thread keeps the ordinary policy; the result says which.
//
// The goroutine must never unlock the thread: its scheduling class would
// leak to other goroutines. The thread exits with the goroutine. Threads
// the runtime starts later are made by its template thread, so they do not
// inherit the policy.
func LockRealtimeThread() bool {
	runtime.LockOSThread()
	// Timer slack defaults to 50 us; 1 us keeps poll timeouts tight.
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
	param := struct{ priority int32 }{realtimePriority}
	_, _, errno := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, unix.SCHED_FIFO, uintptr(unsafe.Pointer(&param)))
	return errno == 0
}
