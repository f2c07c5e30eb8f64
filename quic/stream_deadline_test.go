package quic

import (
	"errors"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// A Read or Write that began on a stream without a deadline waits on no
// deadline channel (deadline.wait); a deadline set while it waits still
// cuts it off.
func TestDeadlineSetWhileWaitingWithoutOne(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxStreamReceiveWindow: 64 << 10, MaxConnectionReceiveWindow: 64 << 10})
		c, _ := e.connect(nil)
		rd, _ := c.OpenStream()
		wr, _ := c.OpenStream()
		start := time.Now()
		go func() {
			time.Sleep(300 * time.Millisecond)
			_ = rd.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			_ = wr.SetWriteDeadline(time.Now().Add(400 * time.Millisecond))
		}()
		writeErr := make(chan error, 1)
		go func() {
			// The server never reads: flow control blocks the Write.
			_, err := wr.Write(make([]byte, 16<<20))
			writeErr <- err
		}()
		if _, err := rd.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Read: %v, want the deadline's error", err)
		}
		if d := time.Since(start); d != 500*time.Millisecond {
			t.Errorf("Read returned after %v, want 500ms", d)
		}
		if err := <-writeErr; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("Write: %v, want the deadline's error", err)
		}
		if d := time.Since(start); d != 700*time.Millisecond {
			t.Errorf("Write returned after %v, want 700ms", d)
		}
		_ = c.CloseWithError(0, "")
	})
}
