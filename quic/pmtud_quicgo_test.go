package quic

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	"github.com/satquic/satquic/internal/testkit"
)

// TestInteropPMTUQuicGo: against quic-go over loopback, whose MTU carries
// anything, a satquic client's PING and PADDING probes are acknowledged
// and it ends at 1452 bytes, the default probing maximum.
func TestInteropPMTUQuicGo(t *testing.T) {
	testkit.CheckGoroutines(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ln, err := quicgo.ListenAddr("127.0.0.1:0", serverTLS(), &quicgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var served sync.WaitGroup
	served.Go(func() {
		c, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		for {
			s, err := c.AcceptStream(ctx)
			if err != nil {
				return
			}
			served.Go(func() {
				if err := serveInterop(s); err != nil {
					s.CancelWrite(1)
				}
			})
		}
	})
	defer served.Wait()
	c, err := DialAddr(ctx, ln.Addr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	if err := runInteropClient(func() (io.ReadWriteCloser, error) { return c.OpenStreamSync(ctx) }); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.Stats().MaxDatagramSize != 1452 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	st := c.Stats()
	t.Logf("datagram size %d, %d probes sent, %d lost", st.MaxDatagramSize, st.MTUProbesSent, st.MTUProbesLost)
	if st.MaxDatagramSize != 1452 || st.MTUProbesSent == 0 || st.MTUBlackHole {
		t.Errorf("datagram size %d after %d probes (black hole %v), want 1452", st.MaxDatagramSize, st.MTUProbesSent, st.MTUBlackHole)
	}
}
