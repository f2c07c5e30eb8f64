package http3

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic"
)

// givingFake is a fakeDatagrams that takes the buffers of a batch as
// quic.Conn.GivePrefixedDatagrams does: each one sent is replaced by the
// one given before it (emptied), nil the first time.
type givingFake struct {
	*fakeDatagrams
	last []byte
}

func (f *givingFake) GivePrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	for i, b := range bs {
		_ = f.SendDatagram(append(slices.Clone(prefix), b...))
		bs[i], f.last = f.last, b[:0]
	}
	return len(bs), nil
}

func (f *givingFake) GivePrefixedDatagramsWait(_ context.Context, prefix []byte, bs [][]byte) (int, error) {
	return f.GivePrefixedDatagrams(prefix, bs)
}

func (f *givingFake) source(*quic.Conn) (datagramConn, func() bool) {
	return f, func() bool { return true }
}

// TestHTTPDatagramsGive: GivePrefixedDatagrams(Wait) hands a batch to a
// connection that takes buffers, with the Quarter Stream ID and the
// prefix in front of each, in order, and leaves in bs what the connection
// gave back.
func TestHTTPDatagramsGive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cdg, sdg := newFakeDatagramPair()
		giver := &givingFake{fakeDatagrams: cdg}
		taken := make(chan *Stream, 1)
		srv := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			taken <- w.(HTTPStreamer).HTTPStream()
		}), EnableExtendedConnect: true, EnableDatagrams: true, datagramSource: sdg.source}
		e := newMemEnv(t, srv)
		tr := e.transport()
		tr.EnableDatagrams = true
		tr.datagramSource = giver.source
		tr.QUICConfig = &quic.Config{KeepAlivePeriod: 10 * time.Second}
		s := openTunnel(t, &connectEnv{memEnv: e, tr: tr, clientDG: cdg, serverDG: sdg})
		server := <-taken
		defer s.Close()
		defer server.Close()
		prefix := []byte{0x00}
		want := []string{"a", "bb", "ccc", "dddd"}
		batch := make([][]byte, len(want))
		for i, w := range want {
			batch[i] = []byte(w)
		}
		first := batch[0]
		if n, err := s.GivePrefixedDatagrams(prefix, batch[:2]); n != 2 || err != nil {
			t.Fatalf("GivePrefixedDatagrams: %d, %v", n, err)
		}
		if n, err := s.GivePrefixedDatagramsWait(context.Background(), prefix, batch[2:]); n != 2 || err != nil {
			t.Fatalf("GivePrefixedDatagramsWait: %d, %v", n, err)
		}
		if batch[0] != nil || &batch[1][:1][0] != &first[:1][0] {
			t.Fatal("the batch does not hold what the connection gave back")
		}
		synctest.Wait()
		for i, w := range want {
			b, err := server.ReceiveDatagram(context.Background())
			if err != nil || string(b) != string(prefix)+w {
				t.Fatalf("datagram %d: %q, %v; want %q after the prefix", i, b, err, w)
			}
		}
	})
}

// TestHTTPDatagramsGiveCopies: over a connection that does not take
// buffers, GivePrefixedDatagrams sends copies and leaves bs as it was.
func TestHTTPDatagramsGiveCopies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, server := openTunnelPair(t)
		batch := [][]byte{[]byte("one"), []byte("two")}
		orig := slices.Clone(batch)
		if n, err := s.GivePrefixedDatagramsWait(context.Background(), []byte{0x00}, batch); n != 2 || err != nil {
			t.Fatalf("GivePrefixedDatagramsWait: %d, %v", n, err)
		}
		for i := range batch {
			if &batch[i][0] != &orig[i][0] {
				t.Fatal("a buffer left the batch although the connection copies")
			}
			clear(batch[i])
		}
		synctest.Wait()
		for _, w := range []string{"one", "two"} {
			if b, err := server.ReceiveDatagram(context.Background()); err != nil || string(b) != "\x00"+w {
				t.Fatalf("got %q, %v; want %q after the prefix", b, err, w)
			}
		}
	})
}
