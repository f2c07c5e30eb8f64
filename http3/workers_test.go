package http3

import (
	"bytes"
	"runtime"
	"testing"
	"time"
)

// goroutineID reads the running goroutine's number from its stack
// header, "goroutine N [running]:", for tests only.
func goroutineID() string {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	f := bytes.Fields(b)
	if len(f) < 2 {
		return ""
	}
	return string(f[1])
}

func TestWorkerPoolReusesGoroutines(t *testing.T) {
	quit := make(chan struct{})
	p := newWorkerPool(quit)
	ids := make(chan string, 1)
	p.run(taskFunc(func() { ids <- goroutineID() }))
	first := <-ids
	// The worker is idle once its function returned; wait for it to
	// reach the select, then hand it the next one.
	deadline := time.Now().Add(5 * time.Second)
	var second string
	for time.Now().Before(deadline) {
		p.run(taskFunc(func() { ids <- goroutineID() }))
		if second = <-ids; second == first {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if second != first {
		t.Errorf("no request ran on the idle goroutine %s", first)
	}

	// Two at once: the busy worker cannot take the second, which gets a
	// goroutine of its own and does not wait.
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	for range 2 {
		p.run(taskFunc(func() {
			started <- struct{}{}
			<-release
		}))
	}
	for range 2 {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("a function did not start while another was busy")
		}
	}
	close(release)

	// Closing quit ends the idle workers.
	before := runtime.NumGoroutine()
	close(quit)
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() >= before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before quit, %d after", before, runtime.NumGoroutine())
		}
	}
}

// taskFunc runs a function as the pool's task.
type taskFunc func()

func (f taskFunc) run() { f() }
