package http3

import (
	"context"
	"crypto/tls"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic"
)

// TestCarefulResumeTransport: an HTTP/3 client whose tls.Config keeps
// session tickets keeps the server's Careful Resume path state with its
// ticket and returns it on its next connection, from which the server
// resumes; nothing beyond the shared ClientSessionCache is needed.
func TestCarefulResumeTransport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var conns []*quic.Conn
		srv := &Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = w.Write([]byte(strings.Repeat("x", 2<<20)))
			}),
			ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
				mu.Lock()
				conns = append(conns, c)
				mu.Unlock()
				return ctx
			},
		}
		e := newMemEnv(t, srv)
		tlsConf := clientTLS()
		tlsConf.ClientSessionCache = tls.NewLRUClientSessionCache(4)
		for i := range 2 {
			tr := e.transport()
			tr.TLSClientConfig = tlsConf
			if got := get(t, tr, "/"); len(got) != 2<<20 {
				t.Fatalf("connection %d: %d bytes", i, len(got))
			}
			time.Sleep(time.Second) // the last path state and the ticket arrive
			_ = tr.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		if len(conns) != 2 {
			t.Fatalf("%d server connections", len(conns))
		}
		first, second := conns[0].Stats().CarefulResume, conns[1].Stats().CarefulResume
		if first.BDPFramesSent == 0 || second.BDPFramesAccepted != 1 || second.SavedCongestionWindow <= 0 {
			t.Fatalf("first connection %+v, second %+v", first, second)
		}
	})
}
