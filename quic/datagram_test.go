package quic

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/netsim"
)

// datagramMsg is the test datagram number i: its number, then bytes that
// depend on it, n bytes in all.
func datagramMsg(i, n int) []byte {
	b := make([]byte, max(n, 4))
	binary.BigEndian.PutUint32(b, uint32(i))
	for j := 4; j < len(b); j++ {
		b[j] = byte(i*7 + j)
	}
	return b
}

// checkDatagramMsg reports what is wrong with b as a test datagram, and
// its number.
func checkDatagramMsg(b []byte, n int) (int, error) {
	if len(b) != max(n, 4) {
		return 0, fmt.Errorf("datagram of %d bytes, want %d", len(b), n)
	}
	i := int(binary.BigEndian.Uint32(b))
	if want := datagramMsg(i, n); string(b) != string(want) {
		return i, fmt.Errorf("datagram %d corrupted", i)
	}
	return i, nil
}

// datagramEchoer is the receiving half of an echo: it sends back every
// datagram it gets until ctx ends or its connection closes.
type datagramEchoer interface {
	SendDatagram([]byte) error
	ReceiveDatagram(context.Context) ([]byte, error)
}

func echoDatagrams(ctx context.Context, c datagramEchoer) {
	for {
		b, err := c.ReceiveDatagram(ctx)
		if err != nil {
			return
		}
		if err := c.SendDatagram(b); err != nil {
			return
		}
	}
}

// runDatagramEcho sends n datagrams of size bytes from c, at most window
// unanswered, and checks the echoes: each once, intact. The window keeps
// the queues within their bounds, and a lost echo is sent again after
// resend.
func runDatagramEcho(ctx context.Context, c datagramEchoer, n, size, window int, resend time.Duration) error {
	echoed := make([]bool, n)
	got, next := 0, 0
	for got < n {
		for next < n && next-got < window {
			if err := c.SendDatagram(datagramMsg(next, size)); err != nil {
				return fmt.Errorf("SendDatagram %d: %w", next, err)
			}
			next++
		}
		rctx, cancel := context.WithTimeout(ctx, resend)
		b, err := c.ReceiveDatagram(rctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			// Lost on the way: send the oldest unanswered again.
			for i := range next {
				if !echoed[i] {
					if err := c.SendDatagram(datagramMsg(i, size)); err != nil {
						return err
					}
					break
				}
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("ReceiveDatagram after %d echoes: %w", got, err)
		}
		i, err := checkDatagramMsg(b, size)
		if err != nil {
			return err
		}
		if i >= next || echoed[i] {
			continue // a duplicate of one sent again
		}
		echoed[i] = true
		got++
	}
	return nil
}

// TestDatagramEchoMemnet: 1000 datagrams go to the server and back over a
// clean memnet path; none is lost, dropped or sent twice.
func TestDatagramEchoMemnet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true})
		c, s := e.connect(&Config{EnableDatagrams: true})
		if !c.ConnectionState().SupportsDatagrams || !s.ConnectionState().SupportsDatagrams {
			t.Fatal("DATAGRAM frames not negotiated")
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		go echoDatagrams(ctx, s)
		const n, size = 1000, 1000
		if err := runDatagramEcho(ctx, c, n, size, 100, time.Minute); err != nil {
			t.Fatal(err)
		}
		cs, ss := c.Stats().Datagrams, s.Stats().Datagrams
		if cs.Sent != n || cs.Received != n || ss.Received != n || ss.Sent != n || cs.SendDropped+cs.ReceiveDropped+ss.SendDropped+ss.ReceiveDropped != 0 {
			t.Errorf("client %+v, server %+v", cs, ss)
		}
		_ = c.CloseWithError(0, "")
	})
}

// TestDatagramAPI: the errors of the API, and ReceiveDatagram once the
// connection closed.
func TestDatagramAPI(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true})
		// A client that did not enable them.
		c, s := e.connect(nil)
		if c.ConnectionState().SupportsDatagrams || s.ConnectionState().SupportsDatagrams {
			t.Error("DATAGRAM frames negotiated with one end only")
		}
		if err := c.SendDatagram([]byte("x")); !errors.Is(err, ErrDatagramsNotNegotiated) {
			t.Errorf("SendDatagram without EnableDatagrams: %v", err)
		}
		if _, err := c.ReceiveDatagram(context.Background()); !errors.Is(err, ErrDatagramsNotNegotiated) {
			t.Errorf("ReceiveDatagram without EnableDatagrams: %v", err)
		}
		if err := s.SendDatagram([]byte("x")); !errors.Is(err, ErrDatagramsNotNegotiated) {
			t.Errorf("SendDatagram to a peer without them: %v", err)
		}
		_ = c.CloseWithError(0, "")

		c, s = e.connect(&Config{EnableDatagrams: true})
		limit := c.MaxDatagramPayloadSize()
		var tooLarge *DatagramTooLargeError
		if err := c.SendDatagram(make([]byte, limit+1)); !errors.As(err, &tooLarge) || tooLarge.MaxDataLen != int64(limit) {
			t.Errorf("SendDatagram of %d bytes: %v", limit+1, err)
		}
		// Received before the close, read after it; then the error.
		if err := c.SendDatagram(datagramMsg(1, limit)); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		time.Sleep(50 * time.Millisecond)
		_ = c.CloseWithError(7, "bye")
		<-s.Context().Done()
		b, err := s.ReceiveDatagram(context.Background())
		if _, cerr := checkDatagramMsg(b, limit); err != nil || cerr != nil {
			t.Fatalf("after close: %v %v", err, cerr)
		}
		var appErr *ApplicationError
		if _, err := s.ReceiveDatagram(context.Background()); !errors.As(err, &appErr) || appErr.ErrorCode != 7 {
			t.Errorf("ReceiveDatagram after close: %v", err)
		}
		if err := c.SendDatagram([]byte("x")); err == nil {
			t.Error("SendDatagram after close succeeded")
		}
	})
}

// TestDatagramsUnderLoss: over a path that loses 5% of packets, the
// datagrams lost are not sent again and every other arrives.
func TestDatagramsUnderLoss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		link := netsim.LinkConfig{RateBps: 100e6, Delay: 10 * time.Millisecond, Loss: "uniform:0.05"}
		e := newMemEnv(t, link, &Config{EnableDatagrams: true})
		c, s := e.connect(&Config{EnableDatagrams: true})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		const n = 400
		received := make(chan int, n)
		go func() {
			for {
				b, err := s.ReceiveDatagram(ctx)
				if err != nil {
					close(received)
					return
				}
				received <- int(binary.BigEndian.Uint32(b))
			}
		}()
		for i := range n {
			if err := c.SendDatagram(datagramMsg(i, 500)); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(time.Second)
		_ = c.CloseWithError(0, "")
		got := 0
		for range received {
			got++
		}
		cs := c.Stats().Datagrams
		t.Logf("server got %d of %d, client stats %+v", got, n, cs)
		// Every datagram missing was in a packet declared lost, and none
		// came again (a loss declared too early may have arrived).
		if cs.Sent != n || cs.Lost == 0 || got == n || uint64(got)+cs.Lost < n {
			t.Errorf("server got %d of %d, client stats %+v", got, n, cs)
		}
	})
}

// TestSendDatagramsBatch: a batch is queued in order up to the first
// refusal, which names the datagram too large; the rest then goes in a
// second call, and every datagram queued arrives, in order over a path
// that neither loses nor reorders.
func TestSendDatagramsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true})
		c, s := e.connect(&Config{EnableDatagrams: true})
		limit := c.MaxDatagramPayloadSize()
		batch := [][]byte{datagramMsg(0, 100), datagramMsg(1, limit), make([]byte, limit+1), datagramMsg(2, 50)}
		n, err := c.SendDatagrams(batch)
		var tooLarge *DatagramTooLargeError
		if n != 2 || !errors.As(err, &tooLarge) {
			t.Fatalf("SendDatagrams: %d queued, %v; want 2 and the third too large", n, err)
		}
		if n, err := c.SendDatagrams(batch[3:]); n != 1 || err != nil {
			t.Fatalf("the rest: %d, %v", n, err)
		}
		for i, size := range []int{100, limit, 50} {
			b, err := s.ReceiveDatagram(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, err := checkDatagramMsg(b, size); err != nil || got != i {
				t.Fatalf("datagram %d: got %d, %v", i, got, err)
			}
		}
		_ = c.CloseWithError(0, "")
		<-s.Context().Done()
		if n, err := c.SendDatagrams(batch[:1]); n != 0 || err == nil {
			t.Errorf("after close: %d queued, %v", n, err)
		}
	})
}

// TestSendDatagramsWait: with a send queue of 4, a batch of 200 waits
// for room instead of pushing out queued datagrams: none is dropped, and
// over a path that loses nothing every one arrives, in order.
func TestSendDatagramsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true, DatagramReceiveQueue: 1024})
		c, s := e.connect(&Config{EnableDatagrams: true, DatagramSendQueue: 4})
		const total = 200
		batch := make([][]byte, total)
		for i := range batch {
			batch[i] = datagramMsg(i, 1000)
		}
		if n, err := c.SendDatagramsWait(context.Background(), batch); n != total || err != nil {
			t.Fatalf("SendDatagramsWait: %d, %v", n, err)
		}
		for i := range total {
			b, err := s.ReceiveDatagram(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got, err := checkDatagramMsg(b, 1000); err != nil || got != i {
				t.Fatalf("datagram %d: got %d, %v", i, got, err)
			}
		}
		if d := c.Stats().Datagrams; d.SendDropped != 0 || d.Sent != total {
			t.Errorf("sender's datagrams %+v", d)
		}
		// A wait ends with its context.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		full := make([][]byte, 8)
		for i := range full {
			full[i] = datagramMsg(i, 10)
		}
		if n, err := c.SendDatagramsWait(ctx, full); !errors.Is(err, context.Canceled) && (err != nil || n != len(full)) {
			t.Errorf("cancelled wait: %d, %v", n, err)
		}
	})
}

// TestReceiveDatagrams: a batch read returns what waits, up to the
// capacity given, in order and intact, while the buffers given back carry
// later datagrams; it waits when none is there, ends with its context, and
// returns the connection's error once it closed.
func TestReceiveDatagrams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true, DatagramReceiveQueue: 1024})
		c, s := e.connect(&Config{EnableDatagrams: true})
		const total, size = 100, 300
		for i := range total {
			if err := c.SendDatagram(datagramMsg(i, size)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		next := 0
		var done [][]byte
		got := make([][]byte, 0, 16)
		for next < total {
			var err error
			got, err = s.ReceiveDatagrams(context.Background(), done, got[:0])
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || len(got) > 16 {
				t.Fatalf("a batch of %d", len(got))
			}
			for _, b := range got {
				if i, err := checkDatagramMsg(b, size); err != nil || i != next {
					t.Fatalf("datagram %d: got %d, %v", next, i, err)
				}
				next++
			}
			// The caller gives them back and keeps no reference.
			done = append(done[:0], got...)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if got, err := s.ReceiveDatagrams(ctx, done, got[:0]); len(got) != 0 || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("with none waiting: %d, %v", len(got), err)
		}
		// The recycled buffers carry the next ones.
		if err := c.SendDatagram(datagramMsg(total, size)); err != nil {
			t.Fatal(err)
		}
		got, err := s.ReceiveDatagrams(context.Background(), nil, got[:0])
		if err != nil || len(got) != 1 {
			t.Fatalf("after recycling: %d, %v", len(got), err)
		}
		if i, err := checkDatagramMsg(got[0], size); err != nil || i != total {
			t.Fatalf("after recycling: got %d, %v", i, err)
		}
		_ = c.CloseWithError(0, "")
		<-s.Context().Done()
		if _, err := s.ReceiveDatagrams(context.Background(), nil, got[:0]); err == nil {
			t.Error("no error after the connection closed")
		}
	})
}

// TestSendPrefixedDatagrams: each datagram of a batch arrives as the
// prefix followed by its payload, and the size limit counts the prefix.
func TestSendPrefixedDatagrams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true})
		c, s := e.connect(&Config{EnableDatagrams: true})
		prefix := []byte{0x40, 0x25}
		limit := c.MaxDatagramPayloadSize()
		batch := [][]byte{[]byte("one"), []byte("two"), make([]byte, limit-len(prefix)+1)}
		n, err := c.SendPrefixedDatagrams(prefix, batch)
		var tooLarge *DatagramTooLargeError
		if n != 2 || !errors.As(err, &tooLarge) || tooLarge.MaxDataLen != int64(limit) {
			t.Fatalf("SendPrefixedDatagrams: %d, %v; want 2 and the third too large", n, err)
		}
		if n, err := c.SendPrefixedDatagramsWait(context.Background(), prefix, [][]byte{[]byte("three")}); n != 1 || err != nil {
			t.Fatalf("SendPrefixedDatagramsWait: %d, %v", n, err)
		}
		for _, want := range []string{"one", "two", "three"} {
			b, err := s.ReceiveDatagram(context.Background())
			if err != nil || string(b) != string(prefix)+want {
				t.Fatalf("got %q, %v; want %q after the prefix", b, err, want)
			}
		}
	})
}

// TestRecycleDatagrams: a buffer given back without a receive carries a
// later datagram, intact.
func TestRecycleDatagrams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true})
		c, s := e.connect(&Config{EnableDatagrams: true})
		const size = 1000
		if err := c.SendDatagram(datagramMsg(0, size)); err != nil {
			t.Fatal(err)
		}
		first, err := s.ReceiveDatagram(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		s.RecycleDatagrams([][]byte{first})
		if err := c.SendDatagram(datagramMsg(1, size)); err != nil {
			t.Fatal(err)
		}
		second, err := s.ReceiveDatagram(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if i, err := checkDatagramMsg(second, size); err != nil || i != 1 {
			t.Fatalf("got %d, %v", i, err)
		}
		if &second[0] != &first[:1][0] {
			t.Error("the datagram did not arrive in the buffer given back")
		}
		_ = c.CloseWithError(0, "")
	})
}
