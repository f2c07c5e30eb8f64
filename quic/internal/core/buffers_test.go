package core

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestSendBufferAckLoss sends a stream in random chunks, loses and
// acknowledges them in random order, and checks that every byte is sent
// until acknowledged and that memory is released.
func TestSendBufferAckLoss(t *testing.T) {
	for seed := range uint64(10) {
		r := rand.New(rand.NewPCG(seed, 2))
		data := payload(100_000+int(seed)*777, seed)
		var b sendBuffer
		b.write(data[:50_000])
		b.write(data[50_000:])
		type chunk struct{ off, n uint64 }
		var inFlight []chunk
		for !b.allAcked() {
			if b.hasPending(uint64(len(data))) {
				sp, _ := b.nextRange(uint64(1+r.IntN(3000)), uint64(len(data)))
				got := make([]byte, sp.len())
				b.readAt(got, sp.lo)
				if !bytes.Equal(got, data[sp.lo:sp.hi]) {
					t.Fatalf("seed %d: bytes at %d differ", seed, sp.lo)
				}
				if v, ok := b.view(sp.lo, sp.len()); ok && !bytes.Equal(v, got) {
					t.Fatalf("seed %d: view at %d differs", seed, sp.lo)
				}
				inFlight = append(inFlight, chunk{sp.lo, sp.len()})
				continue
			}
			i := r.IntN(len(inFlight))
			c := inFlight[i]
			inFlight = append(inFlight[:i], inFlight[i+1:]...)
			if r.IntN(4) == 0 {
				b.onLost(c.off, c.n)
			} else {
				b.onAck(c.off, c.n)
			}
		}
		if b.blocks.len() > 1 || b.buffered() != 0 {
			t.Fatalf("seed %d: %d blocks, %d bytes held after everything was acknowledged", seed, b.blocks.len(), b.buffered())
		}
	}
}

func TestSendBufferRequeueAndLimit(t *testing.T) {
	var b sendBuffer
	b.write(make([]byte, 10_000))
	sp, isNew := b.nextRange(4000, 3000)
	if sp != (span{0, 3000}) || !isNew {
		t.Fatalf("nextRange within limit 3000 = %v %v", sp, isNew)
	}
	b.onAck(1000, 1000)
	b.requeueUnacked()
	if got := b.lost.s; len(got) != 2 || got[0] != (span{0, 1000}) || got[1] != (span{2000, 3000}) {
		t.Fatalf("requeued %v, want [0,1000) and [2000,3000)", got)
	}
	sp, isNew = b.nextRange(500, 10_000)
	if sp != (span{0, 500}) || isNew {
		t.Fatalf("retransmission first: got %v %v", sp, isNew)
	}
}

// TestRecvBufferReassembly delivers overlapping, repeated chunks in random
// order and reads the stream back.
func TestRecvBufferReassembly(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 3))
		data := payload(20_000, seed)
		type chunk struct{ off, end int }
		var chunks []chunk
		for off := 0; off < len(data); {
			end := min(len(data), off+1+r.IntN(1500))
			chunks = append(chunks, chunk{off, end})
			// Overlapping copies, as retransmissions with other
			// boundaries make.
			if r.IntN(3) == 0 {
				lo := max(0, off-r.IntN(500))
				chunks = append(chunks, chunk{lo, min(len(data), end+r.IntN(500))})
			}
			off = end
		}
		r.Shuffle(len(chunks), func(i, j int) { chunks[i], chunks[j] = chunks[j], chunks[i] })
		var b recvBuffer
		var out []byte
		buf := make([]byte, 700)
		for _, c := range chunks {
			b.push(uint64(c.off), data[c.off:c.end])
			if r.IntN(2) == 0 {
				n := b.read(buf)
				out = append(out, buf[:n]...)
			}
		}
		for {
			n := b.read(buf)
			if n == 0 {
				break
			}
			out = append(out, buf[:n]...)
		}
		if !bytes.Equal(out, data) || b.held != 0 || b.highest != uint64(len(data)) {
			t.Fatalf("seed %d: read %d bytes (equal %v), %d held, highest %d", seed, len(out), bytes.Equal(out, data), b.held, b.highest)
		}
		// Only the block holding the read offset may stay.
		if b.blocks.len() > 1 {
			t.Fatalf("seed %d: %d blocks kept after reading everything", seed, b.blocks.len())
		}
	}
}

// TestRecvBufferKeepsFirstCopy checks that a repeated range with other
// bytes does not change the data already held (RFC 9000 section 2.2), and
// that discard gives every block back and goes on tracking arrivals.
func TestRecvBufferKeepsFirstCopy(t *testing.T) {
	var b recvBuffer
	data := payload(3*recvBlockSize, 7)
	b.push(100, data[100:5000])
	other := bytes.Repeat([]byte{0xee}, 6000)
	b.push(0, other)
	got := make([]byte, 6000)
	if n := b.read(got); n != 6000 {
		t.Fatalf("read %d bytes, want 6000", n)
	}
	if !bytes.Equal(got[100:5000], data[100:5000]) || !bytes.Equal(got[:100], other[:100]) || !bytes.Equal(got[5000:], other[5000:]) {
		t.Fatal("bytes held before were overwritten, or the gaps were not filled")
	}
	b.push(9000, data[9000:])
	b.discard(10_000)
	if b.blocks.len() != 0 || b.held != 0 || b.consumedTo() != 10_000 || b.hasReadable() {
		t.Fatalf("after discard: %d blocks, %d held, consumed to %d", b.blocks.len(), b.held, b.consumedTo())
	}
	// A discarding buffer stores nothing but tracks what arrived: the
	// read offset stops at the gap [6000, 9000) until it is filled.
	if b.readOff != 6000 {
		t.Fatalf("read offset %d after discard, want 6000", b.readOff)
	}
	b.push(6000, data[6000:9000])
	if b.readOff != uint64(len(data)) || b.blocks.len() != 0 || b.held != 0 || b.readable() != 0 {
		t.Fatalf("after filling the gap: read offset %d, %d blocks, %d held", b.readOff, b.blocks.len(), b.held)
	}
}

func TestSentLog(t *testing.T) {
	var l sentLog
	for pn := uint64(5); pn < 300; pn++ {
		p := l.push(pn)
		p.setFrames([]sentFrame{{kind: fkStream, id: pn}})
	}
	if f := l.take(7); len(f) != 1 || f[0].id != 7 {
		t.Fatalf("take(7) = %v", f)
	}
	if l.take(7) != nil || l.take(4) != nil || l.take(300) != nil {
		t.Fatal("take of a finished or unknown packet returned frames")
	}
	l.compact()
	if l.base != 5 {
		t.Fatalf("base %d after compacting with 5 live", l.base)
	}
	for pn := uint64(5); pn < 250; pn++ {
		l.take(pn)
	}
	l.compact()
	if l.base != 250 || l.count != 50 {
		t.Fatalf("base %d count %d, want 250 and 50", l.base, l.count)
	}
	n := 0
	l.each(func(pn uint64, f []sentFrame) bool { n++; return f[0].id == pn })
	if n != 50 {
		t.Fatalf("each visited %d records", n)
	}
}

// TestSentLogShrink checks that a shrunk log keeps its live records, drops
// its array when it holds none, and grows again.
func TestSentLogShrink(t *testing.T) {
	var l sentLog
	for pn := uint64(10); pn < 40; pn++ {
		l.push(pn).setFrames([]sentFrame{{kind: fkStream, id: pn}})
	}
	for pn := uint64(10); pn < 37; pn++ {
		l.take(pn)
	}
	l.take(38)
	l.shrink()
	if l.base != 37 || l.count != 3 || len(l.ring) != 3 {
		t.Fatalf("after shrink: base %d, %d records in a ring of %d; want 37, 3, 3", l.base, l.count, len(l.ring))
	}
	if f := l.take(39); len(f) != 1 || f[0].id != 39 {
		t.Fatalf("take(39) after shrink = %v", f)
	}
	for pn := uint64(40); pn < 60; pn++ {
		l.push(pn).setFrames([]sentFrame{{kind: fkStream, id: pn}})
	}
	if f := l.take(37); len(f) != 1 || f[0].id != 37 {
		t.Fatalf("take(37) after growing again = %v", f)
	}
	if f := l.take(59); len(f) != 1 || f[0].id != 59 {
		t.Fatalf("take(59) after growing again = %v", f)
	}
	for pn := uint64(40); pn < 59; pn++ {
		l.take(pn)
	}
	l.shrink()
	if l.count != 0 || l.ring != nil {
		t.Fatalf("an emptied log kept %d records in a ring of %d", l.count, len(l.ring))
	}
	l.push(60).setFrames([]sentFrame{{kind: fkPing}})
	if f := l.take(60); len(f) != 1 || f[0].kind != fkPing {
		t.Fatalf("take(60) after the log was dropped = %v", f)
	}
}
