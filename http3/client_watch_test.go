package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

// onlyConn returns the Transport's one connection.
func onlyConn(t *testing.T, tr *Transport) *clientConn {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.all) != 1 {
		t.Fatalf("%d connections, want 1", len(tr.all))
	}
	for cc := range tr.all {
		return cc
	}
	return nil
}

// watchCounts reads a connection's watches: all, and those idle.
func watchCounts(cc *clientConn) (all, idle int) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.watches.byCtx), cc.watches.idleCount
}

// TestSharedContextWatch: requests that share a context share its watch,
// which waits idle between them once the context served two, and whose
// end cancels every request under way with it; a context used once
// leaves no watch behind.
func TestSharedContextWatch(t *testing.T) {
	testkit.CheckGoroutines(t)
	release := make(chan struct{})
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		_, _ = io.WriteString(w, "ok")
	}))
	tr := newTransport(t)
	get := func(ctx context.Context, path string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url(path), nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}

	once, cancelOnce := context.WithCancel(context.Background())
	if err := get(once, "/"); err != nil {
		t.Fatal(err)
	}
	cancelOnce()
	cc := onlyConn(t, tr)
	if all, idle := watchCounts(cc); all != 0 || idle != 0 {
		t.Fatalf("after a context's one request: %d watches, %d idle", all, idle)
	}

	shared, cancelShared := context.WithCancel(context.Background())
	defer cancelShared()
	for range 3 {
		if err := get(shared, "/"); err != nil {
			t.Fatal(err)
		}
	}
	if all, idle := watchCounts(cc); all != 1 || idle != 1 {
		t.Fatalf("after a context's three requests: %d watches, %d idle, want 1 and 1", all, idle)
	}

	// Two requests under way with the context, canceled together.
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- get(shared, "/stall") }()
	}
	waitFor(t, func() bool {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		w := cc.watches.byCtx[shared]
		return w != nil && w.head != nil && w.head.watchNext != nil
	})
	cancelShared()
	for range 2 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("request of the canceled context: %v", err)
		}
	}
	waitFor(t, func() bool { all, idle := watchCounts(cc); return all == 0 && idle == 0 })
	close(release)
}

// TestIdleWatchesBounded: a connection keeps at most maxIdleWatches
// watches of contexts with no request under way, and stops them all
// when it ends.
func TestIdleWatchesBounded(t *testing.T) {
	cc := &clientConn{}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for range maxIdleWatches + 10 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		for range 2 {
			cs := &clientStream{cc: cc}
			cc.mu.Lock()
			cc.watchLocked(cs, ctx)
			cc.unwatchLocked(cs)
			cc.mu.Unlock()
		}
	}
	if all, idle := watchCounts(cc); all != maxIdleWatches || idle != maxIdleWatches {
		t.Fatalf("%d watches, %d idle, want %d", all, idle, maxIdleWatches)
	}
	cc.closeWatches()
	if all, idle := watchCounts(cc); all != 0 || idle != 0 {
		t.Fatalf("after the connection ended: %d watches, %d idle", all, idle)
	}
}

// valueContext is a context of a struct type, which cannot key a map
// safely: its request gets an AfterFunc of its own.
type valueContext struct {
	context.Context
	tags []string
}

func TestUnsharableContextCancels(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	tr := newTransport(t)
	parent, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(valueContext{parent, []string{"a"}}, http.MethodGet, ts.url("/"), nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RoundTrip: %v", err)
	}
	if all, _ := watchCounts(onlyConn(t, tr)); all != 0 {
		t.Fatalf("%d watches for a context that cannot be shared", all)
	}
}

// waitFor polls cond for up to ten seconds.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
