package testkit

import (
	"runtime"
	"testing"
	"time"
)

// LeakGrace is how long CheckGoroutines waits for a test's goroutines to
// end: closes are asynchronous (a connection's goroutine sends its close and
// leaves), and a busy machine may take a while to schedule them.
const LeakGrace = 5 * time.Second

// CheckGoroutines fails t if goroutines started during it still run
// LeakGrace after it ended, and prints them. It is for tests in real time; a
// synctest bubble checks its own goroutines.
func CheckGoroutines(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(LeakGrace)
		for {
			now := runtime.NumGoroutine()
			if now <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines before the test, %d after:\n%s", before, now, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
