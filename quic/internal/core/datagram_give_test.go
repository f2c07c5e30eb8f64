package core

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestGiveDatagrams: datagrams handed over with GiveDatagrams go out with
// their prefix, in order, once each; the queue keeps the given buffers
// themselves, and returns the bodies of sent ones in exchange, never one
// still queued.
func TestGiveDatagrams(t *testing.T) {
	p := datagramPair(t, 310, true, true)
	prefix := []byte{0x04, 0x00}
	given := map[*byte]bool{}
	var spares [][]byte
	for round := range 3 {
		batch := make([][]byte, 8)
		for i := range batch {
			batch[i] = append(make([]byte, 0, 1400), numbered(round*8+i, 1000)...)
			given[&batch[i][:1][0]] = true
		}
		// Half in one call, then one by one.
		if n, err := p.client.GiveDatagrams(p.now, prefix, batch[:4]); n != 4 || err != nil {
			t.Fatalf("GiveDatagrams: %d, %v", n, err)
		}
		for i := 4; i < 8; i++ {
			if n, err := p.client.GiveDatagrams(p.now, prefix, batch[i:i+1]); n != 1 || err != nil {
				t.Fatalf("GiveDatagrams: %d, %v", n, err)
			}
		}
		for i, spare := range batch {
			n := round*8 + i
			if spare != nil {
				if len(spare) != 0 || !given[&spare[:1][0]] {
					t.Fatalf("datagram %d: got back a buffer of %d bytes that was not a sent datagram's", n, len(spare))
				}
				for j := range p.client.dgram.sendQ.len() {
					if &p.client.dgram.sendQ.at(j).body[:1][0] == &spare[:1][0] {
						t.Fatalf("datagram %d: got back the buffer of a datagram still queued", n)
					}
				}
				spares = append(spares, spare)
			}
		}
		// Bytes written into a returned buffer must not reach the peer.
		for _, s := range spares {
			clear(s[:cap(s)])
		}
		want := (round + 1) * 8
		p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == uint64(want) }, p.now+time.Second)
		for i := range 8 {
			b, ok := p.server.ReceiveDatagram()
			n := round*8 + i
			if !ok || !bytes.Equal(b, append(append([]byte(nil), prefix...), numbered(n, 1000)...)) {
				t.Fatalf("datagram %d arrived changed or not at all", n)
			}
		}
		if _, ok := p.server.ReceiveDatagram(); ok {
			t.Fatal("a datagram arrived twice")
		}
	}
	if len(spares) == 0 {
		t.Fatal("no buffer came back in exchange after datagrams were sent")
	}
}

// TestGiveDatagramsLongPrefix: a prefix longer than a queued datagram's
// head goes out joined to a copy, and the given buffer stays the caller's.
func TestGiveDatagramsLongPrefix(t *testing.T) {
	p := datagramPair(t, 311, true, true)
	prefix := bytes.Repeat([]byte{7}, maxDatagramHead+1)
	b := numbered(1, 500)
	batch := [][]byte{b}
	if n, err := p.client.GiveDatagrams(p.now, prefix, batch); n != 1 || err != nil {
		t.Fatalf("GiveDatagrams: %d, %v", n, err)
	}
	if &batch[0][0] != &b[0] {
		t.Fatal("the buffer was taken although the datagram was copied")
	}
	clear(b)
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 1 }, p.now+time.Second)
	got, _ := p.server.ReceiveDatagram()
	if !bytes.Equal(got, append(append([]byte(nil), prefix...), numbered(1, 500)...)) {
		t.Fatal("the datagram arrived changed")
	}
}

// TestGiveDatagramsRefused: a batch stops at a datagram refused, which
// stays in its slot with those after it; without negotiation nothing is
// taken.
func TestGiveDatagramsRefused(t *testing.T) {
	p := datagramPair(t, 312, true, false)
	x := []byte("x")
	batch := [][]byte{x}
	if n, err := p.client.GiveDatagrams(p.now, nil, batch); n != 0 || !errors.Is(err, ErrDatagramsNotNegotiated) || &batch[0][0] != &x[0] {
		t.Fatalf("GiveDatagrams without negotiation: %d, %v", n, err)
	}
	p = datagramPair(t, 313, true, true)
	big, after := make([]byte, p.client.MaxDatagramPayloadSize()+1), []byte("after")
	batch = [][]byte{[]byte("fits"), big, after}
	n, err := p.client.GiveDatagrams(p.now, nil, batch)
	var tooLarge *DatagramTooLargeError
	if n != 1 || !errors.As(err, &tooLarge) {
		t.Fatalf("GiveDatagrams with one too large: %d, %v", n, err)
	}
	if &batch[1][0] != &big[0] || &batch[2][0] != &after[0] || p.client.dgram.sendQ.len() != 1 {
		t.Fatal("the datagrams from the refused one on left their slots or were queued")
	}
}
