package quic

import (
	"context"
	"testing"
	"time"
)

// TestListenAddrEarlyLoopback: a Listener from ListenAddrEarly over a
// real socket hands out a connection that completes its handshake and
// carries a stream; closing the Listener closes its socket.
func TestListenAddrEarlyLoopback(t *testing.T) {
	l, err := ListenAddrEarly("127.0.0.1:0", serverTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !l.Early() {
		t.Fatal("Listener from ListenAddrEarly not early")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	accepted := make(chan *Conn, 1)
	go func() {
		s, err := l.Accept(ctx)
		if err != nil {
			close(accepted)
			return
		}
		accepted <- s
	}()
	c, err := DialAddr(ctx, l.Addr().String(), clientTLS(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s, ok := <-accepted
	if !ok {
		t.Fatal("Accept failed")
	}
	select {
	case <-s.HandshakeComplete():
	case <-ctx.Done():
		t.Fatal("the server's handshake did not complete")
	}
	echoOnce(t, c, s, 5000)
	if _, err := ListenAddrEarly("127.0.0.1:0", serverTLS(), &Config{MaxHandshakes: -1}); err == nil {
		t.Error("ListenAddrEarly with a negative limit succeeded")
	}
}
