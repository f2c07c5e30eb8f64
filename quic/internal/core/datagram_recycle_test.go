package core

import (
	"bytes"
	"testing"
	"time"
)

// TestDatagramRecycledBuffers: a datagram arrives in a buffer the
// application gave back when one is large enough, with its own bytes, and
// in a new one otherwise; at most as many buffers as the receive queue
// holds are kept.
func TestDatagramRecycledBuffers(t *testing.T) {
	ccfg, scfg := testConfigs(t, 307)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	scfg.DatagramReceiveQueue = 4
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	small := make([]byte, 0, 64)
	large := make([]byte, 0, 512)
	p.server.RecycleDatagram(large)
	p.server.RecycleDatagram(small)
	for range 10 {
		p.server.RecycleDatagram(make([]byte, 8))
	}
	if n := len(p.server.dgram.recvSpare); n != 4 {
		t.Fatalf("kept %d buffers, want the receive queue's 4", n)
	}
	p.server.dgram.recvSpare = p.server.dgram.recvSpare[:2] // large, then small
	for i := range 2 {
		if err := p.client.SendDatagram(p.now, numbered(i, 200)); err != nil {
			t.Fatal(err)
		}
	}
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 2 }, p.now+time.Second)
	first, _ := p.server.ReceiveDatagram()
	second, _ := p.server.ReceiveDatagram()
	if !bytes.Equal(first, numbered(0, 200)) || !bytes.Equal(second, numbered(1, 200)) {
		t.Fatal("datagrams changed on the way")
	}
	// The newest recycled buffer (64 bytes) is too small for 200 bytes:
	// both datagrams get new ones.
	if &first[:1][0] == &small[:1][0] || &second[:1][0] == &small[:1][0] {
		t.Error("a 200-byte datagram went into a 64-byte buffer")
	}
	p.server.dgram.recvSpare = [][]byte{large}
	if err := p.client.SendDatagram(p.now, numbered(2, 200)); err != nil {
		t.Fatal(err)
	}
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 3 }, p.now+time.Second)
	third, _ := p.server.ReceiveDatagram()
	if &third[:1][0] != &large[:1][0] || !bytes.Equal(third, numbered(2, 200)) {
		t.Error("the datagram did not arrive in the recycled buffer with its bytes")
	}
}

// TestDatagramRecycledBuffersBounded: with a tunnel's deep receive queue,
// a burst's buffers given back are kept only up to maxRecycledDatagrams,
// and an idle connection drops them.
func TestDatagramRecycledBuffersBounded(t *testing.T) {
	ccfg, scfg := testConfigs(t, 308)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	scfg.DatagramReceiveQueue = 4096
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	for range 4096 {
		p.server.RecycleDatagram(make([]byte, 0, 1452))
	}
	if n := len(p.server.dgram.recvSpare); n != maxRecycledDatagrams {
		t.Fatalf("kept %d buffers of a burst, want %d", n, maxRecycledDatagrams)
	}
	p.server.ReleaseIdle()
	if n := len(p.server.dgram.recvSpare); n != 0 {
		t.Fatalf("an idle connection keeps %d buffers", n)
	}
}

// TestDatagramBlocks: with no buffer given back, a datagram of a packet's
// size arrives in a block of the process's pool, which the connection
// takes back into that pool once its own spares are full, and a small one
// in a buffer of its own size.
func TestDatagramBlocks(t *testing.T) {
	ccfg, scfg := testConfigs(t, 309)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	scfg.DatagramReceiveQueue = 4
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	for i, size := range []int{1000, 100} {
		if err := p.client.SendDatagram(p.now, numbered(i, size)); err != nil {
			t.Fatal(err)
		}
	}
	p.mustRun(func() bool { return p.server.Stats().Datagrams.Received == 2 }, p.now+time.Second)
	large, _ := p.server.ReceiveDatagram()
	small, _ := p.server.ReceiveDatagram()
	if !bytes.Equal(large, numbered(0, 1000)) || !bytes.Equal(small, numbered(1, 100)) {
		t.Fatal("datagrams changed on the way")
	}
	if cap(large) != datagramBlockSize {
		t.Errorf("a 1000-byte datagram came in a buffer of %d bytes, want a %d-byte block", cap(large), datagramBlockSize)
	}
	if cap(small) > smallDatagram {
		t.Errorf("a 100-byte datagram came in a buffer of %d bytes", cap(small))
	}
	for range 4 {
		p.server.RecycleDatagram(make([]byte, 0, 64))
	}
	p.server.RecycleDatagram(large) // beyond the spares: to the pool
	if n := len(p.server.dgram.recvSpare); n != 4 {
		t.Fatalf("kept %d buffers, want the receive queue's 4", n)
	}
}
