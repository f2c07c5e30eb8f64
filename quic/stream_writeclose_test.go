package quic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// WriteClose buffers all of p, through flow control that makes it wait,
// and ends the stream after it: the peer reads the data, then io.EOF, and
// a later Write fails as after Close. One cut short by its deadline does
// not close the stream: a Write after it still goes through.
func TestWriteClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{MaxStreamReceiveWindow: 64 << 10, MaxConnectionReceiveWindow: 64 << 10})
		c, s := e.connect(nil)
		data := bytes.Repeat([]byte("0123456789abcdef"), 16<<10) // 256 KiB, four windows
		st, err := c.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan []byte, 1)
		go func() {
			in, err := s.AcceptStream(context.Background())
			if err != nil {
				t.Error(err)
				got <- nil
				return
			}
			b, err := io.ReadAll(in)
			if err != nil {
				t.Errorf("ReadAll: %v", err)
			}
			got <- b
		}()
		if n, err := st.WriteClose(data); n != len(data) || err != nil {
			t.Fatalf("WriteClose: %d, %v", n, err)
		}
		if b := <-got; !bytes.Equal(b, data) {
			t.Fatalf("peer read %d bytes, want %d", len(b), len(data))
		}
		if _, err := st.Write([]byte("x")); !errors.Is(err, ErrWriteClosed) {
			t.Errorf("Write after WriteClose: %v, want ErrWriteClosed", err)
		}

		// The server never reads this one: the window and the send
		// buffer stop WriteClose.
		cut, _ := c.OpenStream()
		_ = cut.SetWriteDeadline(time.Now().Add(time.Second))
		big := make([]byte, 16<<20)
		n, err := cut.WriteClose(big)
		if !errors.Is(err, os.ErrDeadlineExceeded) || n >= len(big) {
			t.Fatalf("WriteClose past its deadline: %d, %v", n, err)
		}
		_ = cut.SetWriteDeadline(time.Time{})
		if _, err := cut.Write(nil); err != nil {
			t.Errorf("Write after a WriteClose cut short: %v, want the stream still open", err)
		}
		_ = c.CloseWithError(0, "")
	})
}
