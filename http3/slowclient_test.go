package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
)

// slowBody is the size of the response a stalled client never reads: far
// beyond a receive window that grows only as the client reads (512 KiB
// initially, as the test's client sets it) plus the server's send buffer.
const slowBody = 8 << 20

// slowHandler streams slowBody bytes on /big, counting what its writes
// accepted, and reports on done how it ended: the write error and whether
// the request's context was done by then. Any other path answers "ok".
type slowHandler struct {
	written atomic.Int64
	done    chan slowEnd
}

type slowEnd struct {
	err     error
	ctxDone bool
}

func (h *slowHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/big" {
		_, _ = io.WriteString(w, "ok")
		return
	}
	buf := make([]byte, 16<<10)
	for h.written.Load() < slowBody {
		n, err := w.Write(buf)
		h.written.Add(int64(n))
		if err != nil {
			// The stream is gone: the request's context must end too
			// (net/http's contract), soon if not already.
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			h.done <- slowEnd{err: err, ctxDone: r.Context().Err() != nil}
			return
		}
	}
	h.done <- slowEnd{}
}

// waitStalled waits until the handler's writes stopped advancing, and
// fails the test if the whole body went out: the client read none of it.
func (h *slowHandler) waitStalled(t *testing.T) int64 {
	t.Helper()
	last := int64(-1)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		n := h.written.Load()
		if n == last && n > 0 {
			if n >= slowBody {
				t.Fatalf("the server wrote all %d bytes to a client that reads nothing", n)
			}
			return n
		}
		last = n
	}
	t.Fatalf("the handler's writes never stalled (%d bytes)", h.written.Load())
	return 0
}

// getOK fetches a small response on tr and checks it.
func getOK(t *testing.T, tr *Transport, url, who string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s: %v", who, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "ok" || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %q, %v", who, resp.StatusCode, b, err)
	}
}

// TestSlowClient (issue #5): a client that stops reading a large response
// holds only its own stream, by flow control (RFC 9000 section 4.1): the
// server keeps serving other connections and the client's other requests
// on the same connection. When the client cancels the request
// (RFC 9114 section 4.1.1: H3_REQUEST_CANCELLED) or its connection
// closes, the handler's write fails, its context ends, it returns, and
// nothing is left running.
func TestSlowClient(t *testing.T) {
	testkit.CheckGoroutines(t)
	h := &slowHandler{done: make(chan slowEnd, 1)}
	ts := startServer(t, h)

	for _, how := range []string{"cancel", "close connection"} {
		t.Run(how, func(t *testing.T) {
			h.written.Store(0)
			// Windows a server fills at once: a client's larger
			// defaults would take most of the body.
			trA := &Transport{TLSClientConfig: clientTLS(), QUICConfig: &quic.Config{
				InitialStreamReceiveWindow: 512 << 10, InitialConnectionReceiveWindow: 768 << 10,
			}}
			defer trA.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.url("/big"), nil)
			resp, err := trA.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			stalled := h.waitStalled(t)
			t.Logf("the handler stalled after writing %d of %d bytes", stalled, slowBody)

			// Another connection, and another request on A's.
			trB := newTransport(t)
			getOK(t, trB, ts.url("/b"), "client B")
			getOK(t, trA, ts.url("/a2"), "client A's second request")
			if n := h.written.Load(); n != stalled {
				t.Errorf("the stalled handler went on from %d to %d bytes", stalled, n)
			}

			if how == "cancel" {
				cancel()
			} else {
				_ = trA.Close()
			}
			var end slowEnd
			select {
			case end = <-h.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the handler of the stalled request did not return")
			}
			if end.err == nil || !end.ctxDone {
				t.Errorf("handler ended with write error %v, context done %v", end.err, end.ctxDone)
			}
			var e *Error
			if how == "cancel" && (!errors.As(fromQUIC(end.err), &e) || e.Code != ErrCodeRequestCancelled) {
				t.Errorf("write error %v, want H3_REQUEST_CANCELLED", end.err)
			}
		})
	}
	// The server still serves.
	getOK(t, newTransport(t), ts.url("/after"), "a client after both")
}
