package http3

import (
	"bytes"
	"runtime"
	"testing"
	"testing/synctest"
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
	p := newWorkerPool()
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

	// Closing the pool ends the idle workers.
	before := runtime.NumGoroutine()
	p.close()
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() >= before; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines before quit, %d after", before, runtime.NumGoroutine())
		}
	}
}

// taskFunc runs a function as the pool's task.
type taskFunc func()

func (f taskFunc) run() { f() }

// TestWorkerPoolSweep: an idle goroutine ends between workerIdle and
// twice that after its last request, and one that keeps taking requests
// lives on.
func TestWorkerPoolSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newWorkerPool()
		defer p.close()
		idleWorkers := func() int {
			p.mu.Lock()
			defer p.mu.Unlock()
			return len(p.idle)
		}
		// Two goroutines at once, so that the pool keeps two.
		release := make(chan struct{})
		for range 2 {
			p.run(taskFunc(func() { <-release }))
		}
		close(release)
		synctest.Wait()
		if n := idleWorkers(); n != 2 {
			t.Fatalf("%d idle goroutines, want 2", n)
		}
		// One takes a request every second; the other idles.
		for range 2 * workerIdle / time.Second {
			time.Sleep(time.Second)
			p.run(taskFunc(func() {}))
			synctest.Wait()
		}
		if n := idleWorkers(); n != 1 {
			t.Errorf("after %v, one goroutine busy every second: %d idle goroutines, want 1", 2*workerIdle, n)
		}
		time.Sleep(workerIdle - time.Second)
		synctest.Wait()
		if n := idleWorkers(); n != 1 {
			t.Errorf("%v after its last request: %d idle goroutines, want 1", workerIdle-time.Second, n)
		}
		time.Sleep(workerIdle + 2*time.Second)
		synctest.Wait()
		if n := idleWorkers(); n != 0 {
			t.Errorf("%v after its last request: %d idle goroutines, want 0", 2*workerIdle+time.Second, n)
		}
	})
}

// TestWorkerPoolClose: closing the pool ends the idle goroutines at once
// and a busy one when its request is done.
func TestWorkerPoolClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := newWorkerPool()
		release := make(chan struct{})
		p.run(taskFunc(func() {}))
		p.run(taskFunc(func() { <-release }))
		synctest.Wait()
		p.close()
		close(release)
		// synctest.Test fails if a goroutine of the bubble is left
		// blocked at its end.
		synctest.Wait()
		ran := make(chan struct{})
		p.run(taskFunc(func() { close(ran) }))
		<-ran
	})
}
