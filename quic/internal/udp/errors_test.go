package udp

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"
)

func TestClosedConn(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			c := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			msgs := c.NewReadBatch(4)
			// A reader waiting when the socket closes is woken.
			done := make(chan error, 1)
			go func() {
				_, err := c.ReadBatch(msgs)
				done <- err
			}()
			time.Sleep(20 * time.Millisecond)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, net.ErrClosed) {
					t.Fatalf("blocked read after close: %v", err)
				}
			case <-time.After(ioTimeout):
				t.Fatal("close did not wake the reader")
			}
			if n, err := c.ReadBatch(msgs); n != 0 || !errors.Is(err, net.ErrClosed) {
				t.Fatalf("read on closed conn: %d, %v", n, err)
			}
			out := []Message{{Data: []byte("x"), Addr: netip.MustParseAddrPort("127.0.0.1:9")}}
			if n, err := c.WriteBatch(out); n != 0 || !errors.Is(err, net.ErrClosed) {
				t.Fatalf("write on closed conn: %d, %v", n, err)
			}
		})
	}
}

func TestNewOnClosedSocket(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = pc.Close()
	c, err := New(pc, Options{})
	if err == nil {
		// Platforms without socket options to set notice only on use.
		_, err = c.WriteBatch([]Message{{Data: []byte("x"), Addr: netip.MustParseAddrPort("127.0.0.1:9")}})
	}
	if !errors.Is(err, net.ErrClosed) {
		t.Fatalf("want an error matching net.ErrClosed, got %v", err)
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

func TestReadDeadline(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			c := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			if err := c.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			n, err := c.ReadBatch(c.NewReadBatch(4))
			if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read past deadline: %d, %v", n, err)
			}
		})
	}
}

func TestBatchArguments(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			c := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			if n, err := c.ReadBatch(nil); n != 0 || err != nil {
				t.Fatalf("empty read: %d, %v", n, err)
			}
			if n, err := c.WriteBatch(nil); n != 0 || err != nil {
				t.Fatalf("empty write: %d, %v", n, err)
			}
			if _, err := c.ReadBatch(make([]Message, 4)); !errors.Is(err, errNoBuffer) {
				t.Fatalf("read without buffers: %v", err)
			}
			// An IPv6 destination on an IPv4 socket fails at its index.
			rcv := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			batch := []Message{
				{Data: []byte("one"), Addr: addrOf(rcv, lo4)},
				{Data: []byte("two"), Addr: netip.MustParseAddrPort("[2001:db8::1]:443")},
				{Data: []byte("three"), Addr: addrOf(rcv, lo4)},
			}
			n, err := c.WriteBatch(batch)
			if n != 1 || err == nil {
				t.Fatalf("write with a bad destination: sent %d, %v", n, err)
			}
			expectSequence(t, collect(t, rcv, rcv.NewReadBatch(4), 1), batch[:1], addrOf(c, lo4))
		})
	}
}

func TestNewMessages(t *testing.T) {
	msgs := NewMessages(3, 100)
	if len(msgs) != 3 {
		t.Fatalf("%d messages", len(msgs))
	}
	for i, m := range msgs {
		if len(m.Buf) != 100 || cap(m.Buf) != 100 {
			t.Fatalf("message %d: len %d cap %d", i, len(m.Buf), cap(m.Buf))
		}
	}
	msgs[0].Buf = append(msgs[0].Buf, 1) // must not spill into msgs[1]
	if msgs[1].Buf[0] != 0 {
		t.Fatal("buffers overlap")
	}
	if NewMessages(0, 10) != nil || NewMessages(2, 0)[1].Buf != nil {
		t.Fatal("degenerate sizes")
	}
}
