package core

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestGiveDatagram: datagrams handed over with GiveDatagram go out with
// their prefix, in order, once each; the queue keeps the given buffers
// themselves, and returns the bodies of sent ones in exchange, never one
// still queued.
func TestGiveDatagram(t *testing.T) {
	p := datagramPair(t, 310, true, true)
	prefix := []byte{0x04, 0x00}
	given := map[*byte]bool{}
	var spares [][]byte
	for round := range 3 {
		for i := range 8 {
			n := round*8 + i
			b := append(make([]byte, 0, 1400), numbered(n, 1000)...)
			given[&b[:1][0]] = true
			spare, err := p.client.GiveDatagram(p.now, prefix, b)
			if err != nil {
				t.Fatal(err)
			}
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
			// Bytes written into a returned buffer must not reach the peer.
			for _, s := range spares {
				s = s[:cap(s)]
				clear(s)
			}
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

// TestGiveDatagramLongPrefix: a prefix longer than a queued datagram's
// head goes out joined to a copy, and the given buffer stays the caller's.
func TestGiveDatagramLongPrefix(t *testing.T) {
	p := datagramPair(t, 311, true, true)
	prefix := bytes.Repeat([]byte{7}, maxDatagramHead+1)
	b := numbered(1, 500)
	spare, err := p.client.GiveDatagram(p.now, prefix, b)
	if err != nil {
		t.Fatal(err)
	}
	if &spare[0] != &b[0] {
		t.Fatal("the buffer was taken although the datagram was copied")
	}
	clear(b)
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 1 }, p.now+time.Second)
	got, _ := p.server.ReceiveDatagram()
	if !bytes.Equal(got, append(append([]byte(nil), prefix...), numbered(1, 500)...)) {
		t.Fatal("the datagram arrived changed")
	}
}

// TestGiveDatagramRefused: a datagram refused is not taken, and nothing
// comes back in exchange.
func TestGiveDatagramRefused(t *testing.T) {
	p := datagramPair(t, 312, true, false)
	spare, err := p.client.GiveDatagram(p.now, nil, []byte("x"))
	if !errors.Is(err, ErrDatagramsNotNegotiated) || spare != nil {
		t.Fatalf("GiveDatagram without negotiation: %v, %v", spare, err)
	}
	p = datagramPair(t, 313, true, true)
	var tooLarge *DatagramTooLargeError
	if _, err := p.client.GiveDatagram(p.now, nil, make([]byte, p.client.MaxDatagramPayloadSize()+1)); !errors.As(err, &tooLarge) {
		t.Fatalf("GiveDatagram of a datagram too large: %v", err)
	}
	if p.client.dgram.sendQ.len() != 0 {
		t.Fatal("a refused datagram was queued")
	}
}
