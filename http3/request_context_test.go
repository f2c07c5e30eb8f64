package http3

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
)

// TestRequestContextEndsWithConnection: the contexts of the requests
// under way end when their connection does, with the connection's
// error as their cause, as a child of the connection's context would;
// they carry the local address, and a request done ends its own.
func TestRequestContextEndsWithConnection(t *testing.T) {
	testkit.CheckGoroutines(t)
	type seen struct {
		err, cause error
		local      net.Addr
	}
	started := make(chan struct{}, 3)
	ended := make(chan seen, 3)
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/quick" {
			ctx := r.Context()
			go func() {
				<-ctx.Done()
				ended <- seen{err: ctx.Err(), cause: context.Cause(ctx)}
			}()
			return
		}
		started <- struct{}{}
		<-r.Context().Done()
		local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		ended <- seen{r.Context().Err(), context.Cause(r.Context()), local}
	}))

	qc := rawDial(t, ts.addr)
	openUni(t, qc, controlStream(okSettings), false)
	send := func(path string) {
		st, err := qc.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		_, _ = st.Write(frameBytes(frameHeaders, encodeFields(":method", "GET", ":scheme", "https", ":authority", "localhost", ":path", path)))
		_ = st.Close()
	}
	send("/quick")
	select {
	case s := <-ended:
		if !errors.Is(s.err, context.Canceled) || !errors.Is(s.cause, context.Canceled) {
			t.Errorf("a request done: context ended with %v, cause %v", s.err, s.cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the context of a request done did not end")
	}

	send("/wait")
	send("/wait")
	for range 2 {
		<-started
	}
	_ = qc.CloseWithError(0x42, "bye")
	for range 2 {
		select {
		case s := <-ended:
			var ae *quic.ApplicationError
			if !errors.Is(s.err, context.Canceled) || !errors.As(s.cause, &ae) || ae.ErrorCode != 0x42 || !ae.Remote {
				t.Errorf("context ended with %v, cause %v; want Canceled, the client's close", s.err, s.cause)
			}
			if s.local == nil || s.local.String() != ts.addr {
				t.Errorf("local address %v, want %s", s.local, ts.addr)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a request's context did not end with its connection")
		}
	}
}
