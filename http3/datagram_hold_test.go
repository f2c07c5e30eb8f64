package http3

import (
	"context"
	"testing"
	"testing/synctest"
)

// TestHTTPDatagramsHeld: HoldDatagram and TryHoldDatagram lend each
// datagram's payload inside the buffer it was received in, in order;
// the buffers come back to the connection's spares only when released,
// each once.
func TestHTTPDatagramsHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s, server := openTunnelPair(t)
		batch := [][]byte{[]byte("a"), []byte("bb"), []byte("ccc")}
		if n, err := s.SendDatagrams(batch); n != len(batch) || err != nil {
			t.Fatalf("SendDatagrams: %d, %v", n, err)
		}
		synctest.Wait()
		m := server.c.datagrams
		spares := func() int {
			m.mu.Lock()
			defer m.mu.Unlock()
			return len(m.spare)
		}
		before := spares()
		payload, buf, err := server.HoldDatagram(context.Background())
		if err != nil || string(payload) != "a" {
			t.Fatalf("HoldDatagram: %q, %v", payload, err)
		}
		if len(buf) != 1+len(payload) || &buf[1] != &payload[0] {
			t.Fatalf("the payload is not inside the buffer lent: %q in %q", payload, buf)
		}
		bufs := [][]byte{buf}
		for _, want := range batch[1:] {
			p, b, ok := server.TryHoldDatagram()
			if !ok || string(p) != string(want) {
				t.Fatalf("TryHoldDatagram: %q, %v; want %q", p, ok, want)
			}
			bufs = append(bufs, b)
		}
		if _, _, ok := server.TryHoldDatagram(); ok {
			t.Fatal("TryHoldDatagram with nothing left")
		}
		if n := spares() - before; n != 0 {
			t.Fatalf("%d buffers back before the release, want none", n)
		}
		server.ReleaseDatagrams(bufs)
		if n := spares() - before; n != len(bufs) {
			t.Errorf("%d buffers back after releasing %d", n, len(bufs))
		}
		m.mu.Lock()
		queued := m.queued
		m.mu.Unlock()
		if queued != 0 {
			t.Errorf("%d bytes still counted as queued after the holds", queued)
		}
	})
}
