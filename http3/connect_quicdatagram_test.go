package http3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestExtendedConnectQUICDatagrams: with EnableDatagrams on both ends and
// nothing set in their QUIC configurations, HTTP datagrams travel in real
// QUIC DATAGRAM frames (RFC 9297 section 2.1 over RFC 9221).
func TestExtendedConnectQUICDatagrams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, &Server{Handler: echoTunnel(t, nil), EnableExtendedConnect: true, EnableDatagrams: true})
		tr := e.transport()
		tr.EnableDatagrams = true
		resp, s, err := tr.ExtendedConnect(context.Background(), connectRequest())
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("ExtendedConnect: %v, %v", resp, err)
		}
		defer s.Close()
		for i := range 20 {
			msg := []byte{'q', byte('a' + i)}
			if err := s.SendDatagram(msg); err != nil {
				t.Fatalf("SendDatagram: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			b, err := s.ReceiveDatagram(ctx)
			cancel()
			if err != nil || string(b) != "re:"+string(msg) {
				t.Fatalf("datagram %d back %q, %v", i, b, err)
			}
		}
	})
}

// TestReadDatagramQUIC: over real QUIC DATAGRAM frames, sent one by one
// and in batches, ReadDatagram and TryReadDatagram copy each payload out intact and in order, a buffer too
// short gives io.ErrShortBuffer with what fits, and the buffers they give
// back carry the datagrams that follow.
func TestReadDatagramQUIC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		taken := make(chan *Stream, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(CapsuleProtocolHeader, CapsuleProtocolValue)
			w.WriteHeader(http.StatusOK)
			taken <- w.(HTTPStreamer).HTTPStream()
		})
		e := newMemEnv(t, &Server{Handler: h, EnableExtendedConnect: true, EnableDatagrams: true})
		tr := e.transport()
		tr.EnableDatagrams = true
		resp, s, err := tr.ExtendedConnect(context.Background(), connectRequest())
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("ExtendedConnect: %v, %v", resp, err)
		}
		defer s.Close()
		server := <-taken
		defer server.Close()
		msg := func(i int) []byte { return bytes.Repeat([]byte{byte(i)}, 100+i) }
		const total = 150
		buf := make([]byte, 1500)
		// One at a time, in a batch, and in a batch that waits for room:
		// the last two have the QUIC connection put the Quarter Stream
		// ID in front.
		for i := range 50 {
			if err := s.SendDatagram(msg(i)); err != nil {
				t.Fatal(err)
			}
		}
		var batch [][]byte
		for i := 50; i < total; i++ {
			batch = append(batch, msg(i))
		}
		if n, err := s.SendDatagrams(batch[:50]); n != 50 || err != nil {
			t.Fatalf("SendDatagrams: %d, %v", n, err)
		}
		if n, err := s.SendDatagramsWait(context.Background(), batch[50:]); n != 50 || err != nil {
			t.Fatalf("SendDatagramsWait: %d, %v", n, err)
		}
		tried := 0
		for i := range total {
			n, ok, err := server.TryReadDatagram(buf)
			if ok {
				tried++
			} else {
				n, err = server.ReadDatagram(context.Background(), buf)
			}
			if err != nil || !bytes.Equal(buf[:n], msg(i)) {
				t.Fatalf("datagram %d: %d bytes, %v", i, n, err)
			}
		}
		if _, ok, _ := server.TryReadDatagram(buf); ok || tried == 0 {
			t.Fatalf("a datagram more than sent, or none waiting after another (%d)", tried)
		}
		if err := s.SendDatagram(msg(7)); err != nil {
			t.Fatal(err)
		}
		short := make([]byte, 10)
		if n, err := server.ReadDatagram(context.Background(), short); n != 10 || !errors.Is(err, io.ErrShortBuffer) || !bytes.Equal(short, msg(7)[:10]) {
			t.Fatalf("short buffer: %d, %v", n, err)
		}
	})
}
