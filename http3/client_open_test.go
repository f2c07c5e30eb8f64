package http3

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
)

// TestStreamCreditQueueCancel: with the server's one stream in use, a
// request waits for credit and a third waits behind it; the third's
// context still ends its wait at once.
func TestStreamCreditQueueCancel(t *testing.T) {
	testkit.CheckGoroutines(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}), func(s *Server) { s.QUICConfig = &quic.Config{MaxIncomingStreams: 1} })
	tr := newTransport(t)
	var wg sync.WaitGroup
	get := func() {
		defer wg.Done()
		resp, err := tr.RoundTrip(mustRequest(t, ts.url("/")))
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	wg.Add(1)
	go get()
	<-entered // the one stream is taken
	wg.Add(1)
	go get() // waits for credit
	time.Sleep(50 * time.Millisecond)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url("/"), nil)
	start := time.Now()
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("the request waiting in line: %v after %v, want its deadline", err, time.Since(start))
	}
	close(release)
	wg.Wait()
}
