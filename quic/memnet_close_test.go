package quic

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/netsim"
)

func TestReadDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, _ := e.connect(nil)
		st, _ := c.OpenStream()
		start := time.Now()
		_ = st.SetReadDeadline(start.Add(time.Second))
		n, err := st.Read(make([]byte, 10))
		if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("Read: %d, %v", n, err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("deadline error %v is not a net.Error timeout", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("Read returned after %v, want 1s", d)
		}
		// A deadline in the past fails at once; moving it while a Read
		// waits applies to that Read.
		if _, err := st.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read past the deadline: %v", err)
		}
		_ = st.SetReadDeadline(time.Time{})
		start = time.Now()
		go func() {
			time.Sleep(500 * time.Millisecond)
			_ = st.SetDeadline(time.Now().Add(250 * time.Millisecond))
		}()
		if _, err := st.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read with a moved deadline: %v", err)
		}
		if d := time.Since(start); d != 750*time.Millisecond {
			t.Errorf("moved deadline hit after %v, want 750ms", d)
		}
		_ = c.CloseWithError(0, "")
	})
}

func TestWriteDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The server never reads: flow control stops the sender, and
		// Write blocks once the send buffer is full.
		e := newMemEnv(t, link10ms, &Config{MaxStreamReceiveWindow: 64 << 10, MaxConnectionReceiveWindow: 64 << 10})
		c, _ := e.connect(nil)
		st, _ := c.OpenStream()
		start := time.Now()
		_ = st.SetWriteDeadline(start.Add(2 * time.Second))
		big := make([]byte, 16<<20)
		n, err := st.Write(big)
		if !errors.Is(err, os.ErrDeadlineExceeded) || n == 0 || n >= len(big) {
			t.Fatalf("Write: %d of %d bytes, %v", n, len(big), err)
		}
		if d := time.Since(start); d != 2*time.Second {
			t.Errorf("Write returned after %v, want 2s", d)
		}
		_ = c.CloseWithError(0, "")
	})
}

func TestCloseWithError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(nil)
		ctx := context.Background()
		cst, _ := c.OpenStream()
		_, _ = cst.Write([]byte("hello"))
		sst, err := s.AcceptStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// A Read waiting on the server when the client closes.
		readErr := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(sst)
			readErr <- err
		}()
		time.Sleep(100 * time.Millisecond)
		if err := c.CloseWithError(42, "bye"); err != nil {
			t.Fatal(err)
		}
		var ae *ApplicationError
		if err := <-readErr; !errors.As(err, &ae) || !ae.Remote || ae.ErrorCode != 42 || ae.ErrorMessage != "bye" {
			t.Errorf("server Read: %v", err)
		}
		if _, err := s.AcceptStream(ctx); !errors.As(err, &ae) || !ae.Remote {
			t.Errorf("server AcceptStream: %v", err)
		}
		<-s.Context().Done()
		if cause := context.Cause(s.Context()); !errors.As(cause, &ae) {
			t.Errorf("server context cause: %v", cause)
		}
		// The client's own calls report its local close.
		if _, err := cst.Write([]byte("x")); !errors.As(err, &ae) || ae.Remote || ae.ErrorCode != 42 {
			t.Errorf("client Write after close: %v", err)
		}
		if _, err := c.OpenStream(); !errors.As(err, &ae) || ae.Remote {
			t.Errorf("client OpenStream after close: %v", err)
		}
		if err := c.CloseWithError(1, "again"); err != nil {
			t.Errorf("second CloseWithError: %v", err)
		}
		select {
		case <-c.Context().Done():
		default:
			t.Error("client context not done")
		}
	})
}

func TestStreamCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(nil)
		ctx := context.Background()

		// CancelWrite: the peer's Read fails with the code.
		cst, _ := c.OpenStream()
		_, _ = cst.Write([]byte("partial"))
		sst, _ := s.AcceptStream(ctx)
		cst.CancelWrite(7)
		_, err := io.ReadAll(sst)
		var se *StreamError
		if !errors.As(err, &se) || !se.Remote || se.ErrorCode != 7 || se.StreamID != cst.StreamID() {
			t.Errorf("Read after the peer's reset: %v", err)
		}
		if _, err := cst.Write([]byte("x")); !errors.As(err, &se) || se.Remote || se.ErrorCode != 7 {
			t.Errorf("Write after CancelWrite: %v", err)
		}

		// CancelRead: the peer's Write fails with the code once
		// STOP_SENDING arrives.
		cst2, _ := c.OpenStream()
		_, _ = cst2.Write([]byte("x"))
		sst2, _ := s.AcceptStream(ctx)
		sst2.CancelRead(9)
		if _, err := sst2.Read(make([]byte, 1)); !errors.As(err, &se) || se.Remote || se.ErrorCode != 9 {
			t.Errorf("Read after CancelRead: %v", err)
		}
		var werr error
		for range 100 {
			if _, werr = cst2.Write(make([]byte, 1000)); werr != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !errors.As(werr, &se) || !se.Remote || se.ErrorCode != 9 {
			t.Errorf("Write after the peer's STOP_SENDING: %v", werr)
		}

		// Close after the peer's STOP_SENDING says so, with its code
		// (RFC 9000 section 3.5), as Write does.
		cst3, _ := c.OpenStream()
		_, _ = cst3.Write([]byte("request"))
		sst3, _ := s.AcceptStream(ctx)
		sst3.CancelRead(11)
		time.Sleep(100 * time.Millisecond)
		if err := cst3.Close(); !errors.As(err, &se) || !se.Remote || se.ErrorCode != 11 {
			t.Errorf("Close after the peer's STOP_SENDING: %v", err)
		}

		// A Write after Close is ErrWriteClosed, for errors.Is too.
		cst4, _ := c.OpenStream()
		_ = cst4.Close()
		if _, err := cst4.Write([]byte("x")); !errors.Is(err, ErrWriteClosed) {
			t.Errorf("Write after Close: %v", err)
		}
		_ = c.CloseWithError(0, "")
	})
}

func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxIdleTimeout: 5 * time.Second})
		start := time.Now()
		c, s := e.connect(&Config{MaxIdleTimeout: 60 * time.Second})
		st, _ := c.OpenStream()
		_, err := st.Read(make([]byte, 1))
		var ite *IdleTimeoutError
		if !errors.As(err, &ite) {
			t.Fatalf("Read on an idle connection: %v", err)
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("%v is not a net.Error timeout", err)
		}
		// The smaller timeout, the server's, counts from the last
		// packet: the end of the handshake.
		if d := time.Since(start); d < 5*time.Second || d > 5200*time.Millisecond {
			t.Errorf("client timed out after %v, want about 5s", d)
		}
		<-s.Context().Done()
		if err := context.Cause(s.Context()); !errors.As(err, &ite) {
			t.Errorf("server: %v", err)
		}
	})
}

func TestKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxIdleTimeout: 5 * time.Second})
		c, s := e.connect(&Config{KeepAlivePeriod: 2 * time.Second})
		time.Sleep(30 * time.Second)
		for name, conn := range map[string]*Conn{"client": c, "server": s} {
			if err := context.Cause(conn.Context()); err != nil {
				t.Errorf("%s closed after 30s with keep-alives: %v", name, err)
			}
		}
		echoOnce(t, c, s, 1000)
		_ = c.CloseWithError(0, "")
	})
}

func TestTransportClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(nil)
		st, _ := c.OpenStream()
		if err := e.client.Close(); err != nil {
			t.Fatal(err)
		}
		// Close returned: the client's connection is over, and the
		// server heard its CONNECTION_CLOSE.
		if _, err := st.Write([]byte("x")); !errors.Is(err, ErrTransportClosed) {
			t.Errorf("Write after Transport.Close: %v", err)
		}
		if _, err := e.client.Dial(context.Background(), e.server.LocalAddr(), clientTLS(), nil); !errors.Is(err, ErrTransportClosed) {
			t.Errorf("Dial on a closed Transport: %v", err)
		}
		<-s.Context().Done()
		var ae *ApplicationError
		if err := context.Cause(s.Context()); !errors.As(err, &ae) || !ae.Remote || ae.ErrorCode != 0 {
			t.Errorf("server: %v", err)
		}
		if err := e.server.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.l.Accept(context.Background()); !errors.Is(err, ErrServerClosed) {
			t.Errorf("Accept after Transport.Close: %v", err)
		}
	})
}

func TestListenerClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(nil)
		if err := e.l.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.l.Accept(context.Background()); !errors.Is(err, ErrServerClosed) {
			t.Errorf("Accept after Close: %v", err)
		}
		// The accepted connection goes on.
		echoOnce(t, c, s, 1000)
		// New clients are not answered.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := e.client.Dial(ctx, e.server.LocalAddr(), clientTLS(), nil); err != context.DeadlineExceeded {
			t.Errorf("Dial after the Listener closed: %v", err)
		}
		_ = c.CloseWithError(0, "")
	})
}

func TestHandshakeFailures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		ctx := context.Background()
		var te *TransportError

		// No common application protocol: the server's TLS alert 120.
		bad := clientTLS()
		bad.NextProtos = []string{"other"}
		_, err := e.client.Dial(ctx, e.server.LocalAddr(), bad, nil)
		if !errors.As(err, &te) || !te.Remote || te.ErrorCode != 0x100+120 {
			t.Errorf("ALPN mismatch: %v", err)
		}

		// An untrusted certificate: the client's own alert 42.
		untrusted := clientTLS()
		untrusted.RootCAs = nil
		_, err = e.client.Dial(ctx, e.server.LocalAddr(), untrusted, nil)
		if !errors.As(err, &te) || te.Remote || te.ErrorCode != 0x100+42 {
			t.Errorf("untrusted certificate: %v", err)
		}

		// Configuration errors are reported before anything is sent.
		noALPN := clientTLS()
		noALPN.NextProtos = nil
		if _, err := e.client.Dial(ctx, e.server.LocalAddr(), noALPN, nil); err == nil {
			t.Error("Dial without ALPN succeeded")
		}
		if _, err := e.client.Dial(ctx, e.server.LocalAddr(), clientTLS(), &Config{CongestionControl: "vegas"}); err == nil {
			t.Error("Dial with an unknown congestion controller succeeded")
		}
		if _, err := e.client.Listen(&tlsNoCert, nil); err == nil {
			t.Error("Listen without a certificate succeeded")
		}
		for _, bad := range []*Config{{MaxIdleTimeout: -time.Second}, {MaxDatagramSize: 1000}, {MaxDatagramSize: 10000},
			{InitialStreamReceiveWindow: 1 << 20, MaxStreamReceiveWindow: 1 << 10}, {MaxAckDelay: time.Hour}} {
			if _, err := e.client.Listen(serverTLS(), bad); err == nil {
				t.Errorf("Listen with %+v succeeded", *bad)
			}
		}
	})
}

var tlsNoCert = *clientTLS()

func TestHandshakeTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Everything toward the server is lost.
		e := newMemEnv(t, netsim.LinkConfig{Delay: 10 * time.Millisecond, Loss: "uniform:1"}, nil)
		start := time.Now()
		_, err := e.client.Dial(context.Background(), e.server.LocalAddr(), clientTLS(), &Config{HandshakeTimeout: 3 * time.Second})
		var hte *HandshakeTimeoutError
		if !errors.As(err, &hte) {
			t.Fatalf("Dial: %v", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("gave up after %v, want 3s", d)
		}
		// A context that ends first wins.
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		if _, err := e.client.Dial(ctx, e.server.LocalAddr(), clientTLS(), nil); err != context.DeadlineExceeded {
			t.Errorf("Dial with a context: %v", err)
		}
	})
}

// TestCancelReadFreesStream: a stream whose data all arrived, then was
// abandoned with CancelRead, must free its place under the peer's stream
// limit.
func TestCancelReadFreesStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxIncomingStreams: 2})
		c, s := e.connect(nil)
		ctx := context.Background()
		go func() {
			for {
				st, err := s.AcceptStream(ctx)
				if err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond) // the FIN has arrived
				st.CancelRead(0)
				_, _ = st.Write([]byte("ok"))
				_ = st.Close()
			}
		}()
		for i := range 10 {
			ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			st, err := c.OpenStreamSync(ctx)
			cancel()
			if err != nil {
				t.Fatalf("stream %d: %v", i, err)
			}
			_, _ = st.Write([]byte("hello"))
			_ = st.Close()
			if b, err := io.ReadAll(st); err != nil || string(b) != "ok" {
				t.Fatalf("stream %d: %q, %v", i, b, err)
			}
		}
		_ = c.CloseWithError(0, "")
	})
}

// TestCancelWakesBlockedCalls: CancelRead and CancelWrite from another
// goroutine end a Read or Write waiting on the same stream.
func TestCancelWakesBlockedCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxStreamReceiveWindow: 64 << 10, MaxConnectionReceiveWindow: 64 << 10})
		c, _ := e.connect(nil)
		st, _ := c.OpenStream()
		readErr, writeErr := make(chan error, 1), make(chan error, 1)
		go func() {
			_, err := st.Read(make([]byte, 10))
			readErr <- err
		}()
		go func() {
			_, err := st.Write(make([]byte, 8<<20)) // the peer never reads
			writeErr <- err
		}()
		time.Sleep(time.Second)
		st.CancelRead(3)
		st.CancelWrite(4)
		var se *StreamError
		if err := <-readErr; !errors.As(err, &se) || se.ErrorCode != 3 || se.Remote {
			t.Errorf("blocked Read: %v", err)
		}
		if err := <-writeErr; !errors.As(err, &se) || se.ErrorCode != 4 || se.Remote {
			t.Errorf("blocked Write: %v", err)
		}
		_ = c.CloseWithError(0, "")
	})
}
