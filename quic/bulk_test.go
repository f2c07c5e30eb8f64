package quic

import (
	"context"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
)

// TestLoopbackBulk moves 50 MiB over a real loopback socket and checks it
// arrives intact.
func TestLoopbackBulk(t *testing.T) {
	if testing.Short() {
		t.Skip("50 MiB transfer")
	}
	testkit.CheckGoroutines(t)
	const size = 50 << 20
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conf := &Config{MaxDatagramSize: 1452}
	l, err := ListenAddr("127.0.0.1:0", serverTLS(), conf)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	data := testkit.Payload(size, 7)
	want := sum(data)
	errc := make(chan error, 1)
	go func() {
		errc <- func() error {
			c, err := l.Accept(ctx)
			if err != nil {
				return err
			}
			s, err := c.OpenUniStream()
			if err != nil {
				return err
			}
			if _, err := s.Write(data); err != nil {
				return err
			}
			return s.Close()
		}()
	}()
	c, err := DialAddr(ctx, l.Addr().String(), clientTLS(), conf)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	s, err := c.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	n, got, err := testkit.ReadAllSum(s)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatalf("after %d bytes: %v", n, err)
	}
	if err := <-errc; err != nil {
		t.Fatalf("server: %v", err)
	}
	if n != size || got != want {
		t.Fatalf("received %d bytes, sha256 %x; sent %d, %x", n, got, size, want)
	}
	st := c.Stats()
	t.Logf("%d MiB in %v: %.0f Mbit/s; rtt %v, received %d packets", size>>20, elapsed.Round(time.Millisecond),
		float64(size)*8/elapsed.Seconds()/1e6, st.SmoothedRTT, st.PacketsReceived)
}
