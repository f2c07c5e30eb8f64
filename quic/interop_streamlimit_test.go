package quic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	"github.com/satquic/satquic/internal/testkit"
)

// A client at the server's stream limit gets a stream only after an
// earlier one ended at the server, which takes the server's application
// reading each request up to its FIN. TestInteropMultiplexing hung now
// and then under the race detector because the test server stopped
// reading after the request line: when the client's FIN travelled in a
// packet after the request's (a slow machine lets the connection send
// the request before Close), the stream never ended at the server, no
// MAX_STREAMS came, and the client waited at the limit. These tests send
// every FIN alone, a pause after the request, through a small limit.

const (
	splitFINLimit    = 5
	splitFINRequests = 3*splitFINLimit - 1
	// splitFINPause is long enough for the request to leave in a packet
	// of its own on any machine.
	splitFINPause = 20 * time.Millisecond
)

// getSplitFIN fetches files one after another on streams from open, each
// request's FIN sent a pause after the request.
func getSplitFIN(open func() (io.ReadWriteCloser, error)) error {
	var errs []error
	for i := range splitFINRequests {
		s, err := open()
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("stream %d: %w", i, err))...)
		}
		name := strconv.Itoa(i)
		if _, err := io.WriteString(s, "GET /"+name+"\r\n"); err != nil {
			return err
		}
		time.Sleep(splitFINPause)
		if err := s.Close(); err != nil {
			return err
		}
		errs = append(errs, recvHQ(s, name))
	}
	return errors.Join(errs...)
}

func TestInteropSplitFIN(t *testing.T) {
	t.Run("satquic to quic-go", func(t *testing.T) {
		testkit.CheckGoroutines(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		defer wg.Wait()
		ln, err := quicgo.ListenAddr("127.0.0.1:0", serverTLS(), &quicgo.Config{MaxIncomingStreams: splitFINLimit})
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		wg.Go(func() {
			c, err := ln.Accept(ctx)
			if err != nil {
				return
			}
			serveHQConn(ctx, &wg, quicgoStreams(c))
		})
		c, err := DialAddr(ctx, ln.Addr().String(), clientTLS(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		if err := getSplitFIN(func() (io.ReadWriteCloser, error) { return c.OpenStreamSync(ctx) }); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("quic-go to satquic", func(t *testing.T) {
		testkit.CheckGoroutines(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l, err := ListenAddr("127.0.0.1:0", serverTLS(), &Config{MaxIncomingStreams: splitFINLimit})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			serveHQConn(ctx, &wg, satquicStreams(c))
		})
		defer l.Close()
		c, err := quicgo.DialAddr(ctx, l.Addr().String(), clientTLS(), &quicgo.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		if err := getSplitFIN(func() (io.ReadWriteCloser, error) { return c.OpenStreamSync(ctx) }); err != nil {
			t.Fatal(err)
		}
	})
}
