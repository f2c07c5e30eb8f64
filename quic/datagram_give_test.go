package quic

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

// TestGivePrefixedDatagramsWait: a batch handed over to a send queue of 4
// waits for room; each datagram arrives once, in order, with the prefix;
// the batch's slots come back holding buffers the connection no longer
// uses, which the caller overwrites without changing what arrives.
func TestGivePrefixedDatagramsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true, DatagramReceiveQueue: 1024})
		c, s := e.connect(&Config{EnableDatagrams: true, DatagramSendQueue: 4})
		prefix := []byte{0x00}
		const total, size = 64, 1000
		batch := make([][]byte, total)
		given := map[*byte]bool{}
		for i := range batch {
			batch[i] = append(make([]byte, 0, 1500), datagramMsg(i, size)...)
			given[&batch[i][0]] = true
		}
		if n, err := c.GivePrefixedDatagramsWait(context.Background(), prefix, batch); n != total || err != nil {
			t.Fatalf("GivePrefixedDatagramsWait: %d, %v", n, err)
		}
		returned := 0
		for _, b := range batch {
			if b == nil {
				continue
			}
			if len(b) != 0 || !given[&b[:1][0]] {
				t.Fatal("a slot came back with a buffer that was not a sent datagram's")
			}
			returned++
			clear(b[:cap(b)])
		}
		if returned == 0 {
			t.Error("no buffer came back although the queue of 4 sent most of 64")
		}
		for i := range total {
			b, err := s.ReceiveDatagram(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(b) == 0 || b[0] != prefix[0] {
				t.Fatalf("datagram %d lost its prefix", i)
			}
			if got, err := checkDatagramMsg(b[1:], size); err != nil || got != i {
				t.Fatalf("datagram %d: got %d, %v", i, got, err)
			}
		}
		if d := c.Stats().Datagrams; d.SendDropped != 0 || d.Sent != total {
			t.Errorf("sender's datagrams %+v", d)
		}
	})
}

// TestGivePrefixedDatagramsRefused: the batch stops at a datagram too
// large, which stays in its slot, as do those after it.
func TestGivePrefixedDatagramsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, &Config{EnableDatagrams: true})
		c, s := e.connect(&Config{EnableDatagrams: true})
		prefix := []byte{0x40, 0x25}
		limit := c.MaxDatagramPayloadSize()
		big, last := make([]byte, limit-len(prefix)+1), []byte("three")
		batch := [][]byte{[]byte("one"), []byte("two"), big, last}
		n, err := c.GivePrefixedDatagrams(prefix, batch)
		var tooLarge *DatagramTooLargeError
		if n != 2 || !errors.As(err, &tooLarge) {
			t.Fatalf("GivePrefixedDatagrams: %d, %v; want 2 and the third too large", n, err)
		}
		if &batch[2][0] != &big[0] || &batch[3][0] != &last[0] {
			t.Fatal("the datagrams not queued left their slots")
		}
		for _, want := range []string{"one", "two"} {
			b, err := s.ReceiveDatagram(context.Background())
			if err != nil || string(b) != string(prefix)+want {
				t.Fatalf("got %q, %v; want %q after the prefix", b, err, want)
			}
		}
	})
}
