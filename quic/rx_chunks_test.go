package quic

import (
	"net/netip"
	"testing"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/udp"
)

func listenUDP(t *testing.T, opts udp.Options) *udp.Conn {
	t.Helper()
	c, err := udp.Listen("udp4", "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// A read buffer a connection still reads from is swapped for a fresh one
// before the next read, and goes back to its pool only when the
// connection is done with it.
func TestRxSlotsSwapHeldBuffers(t *testing.T) {
	conn := listenUDP(t, udp.Options{DisableGRO: true})
	tr := &Transport{}
	s := newRxSlots(conn, 4, nil)
	defer s.close()
	if len(s.msgs) != 4 || len(s.msgs[3].Buf) != udp.DefaultMaxDatagramSize {
		t.Fatalf("layout without GRO: %d messages, last buffer %d bytes", len(s.msgs), len(s.msgs[3].Buf))
	}
	held := s.chunks[1]
	s.msgs[1].Data, s.msgs[1].BufIndex = s.msgs[1].Buf[:1200], 1
	s.msgs[0].Data, s.msgs[0].BufIndex = s.msgs[0].Buf[:40], 0
	s.count(2)
	if s.byReference(&s.msgs[0]) != nil {
		t.Fatal("a 40-byte datagram in a 1500-byte buffer is handed on by reference")
	}
	if s.byReference(&s.msgs[1]) != held {
		t.Fatal("a 1200-byte datagram in a 1500-byte buffer is copied")
	}
	p := tr.refPacket(s.msgs[1].Data, held, netip.AddrPort{}, ecn.NotECT)
	holdChunks([]*packet{p}) // as the reader does when it hands packets on
	s.prepare(conn)
	if s.chunks[1] == held || &s.msgs[1].Buf[0] == &held.buf[0] {
		t.Fatal("the held buffer is still offered to the socket")
	}
	if s.chunks[0] == nil || s.chunks[0].busy() {
		t.Fatal("a buffer nobody holds was swapped or is busy")
	}
	if got := held.refs.Load(); got != 1 {
		t.Fatalf("the swapped buffer has %d holders, want the packet alone", got)
	}
	tr.putPacket(p)
	if got := held.refs.Load(); got != 0 {
		t.Fatalf("after the packet, %d holders", got)
	}
}

// With GRO, a coalesced buffer's datagrams go by reference, and a new
// layout lets go of the old one's buffers, which stay with the
// connections that hold them.
func TestRxSlotsGrowth(t *testing.T) {
	conn := listenUDP(t, udp.Options{})
	if !conn.Capabilities().GRO {
		t.Skip("no GRO")
	}
	tr := &Transport{}
	small := newRxSlots(conn, smallReadBatch, nil)
	if small.chunks[0] == nil || len(small.msgs[0].Buf) != udp.GROBufferSize || small.chunks[1] != nil {
		t.Fatal("a small GRO batch should have one 64 KiB buffer")
	}
	for i := range 4 {
		small.msgs[i].Data, small.msgs[i].BufIndex = small.msgs[0].Buf[i*2500:(i+1)*2500], 0
	}
	small.count(4)
	old := small.chunks[0]
	if small.byReference(&small.msgs[3]) != old {
		t.Fatal("10 kB of one 64 KiB GRO buffer is copied")
	}
	p := tr.refPacket(small.msgs[3].Data, old, netip.AddrPort{}, ecn.NotECT)
	holdChunks([]*packet{p})
	big := newRxSlots(conn, readBatchSize, small)
	defer big.close()
	if got := old.refs.Load(); got != 1 {
		t.Fatalf("the old layout's buffer has %d holders, want the packet alone", got)
	}
	if n := len(big.msgs); n != readBatchSize || big.chunks[readBatchSize/4-1] == nil || big.chunks[readBatchSize/4] != nil {
		t.Fatalf("full layout: %d messages", n)
	}
	tr.putPacket(p)
	if got := old.refs.Load(); got != 0 {
		t.Fatalf("after the packet, %d holders", got)
	}
}

// The holds of a run of packets in one read buffer are taken and given
// back together, and the buffer goes back to its pool with the last.
func TestRxChunkHoldsInRuns(t *testing.T) {
	tr := &Transport{}
	a, b := newRxChunk(udp.DefaultMaxDatagramSize), newRxChunk(udp.DefaultMaxDatagramSize)
	var ps []*packet
	for _, c := range []*rxChunk{a, a, a, b, nil, b, a} {
		if c == nil {
			ps = append(ps, tr.getPacket([]byte{1, 2, 3}, netip.AddrPort{}, ecn.NotECT))
			continue
		}
		ps = append(ps, tr.refPacket(c.buf[:100], c, netip.AddrPort{}, ecn.NotECT))
	}
	holdChunks(ps)
	if a.refs.Load() != 5 || b.refs.Load() != 3 {
		t.Fatalf("holds %d and %d, want the reader's and 4, and the reader's and 2", a.refs.Load(), b.refs.Load())
	}
	a.release(1) // the reader lets go
	b.release(1)
	tr.putPackets(ps[:4])
	if a.refs.Load() != 1 || b.refs.Load() != 1 {
		t.Fatalf("after the first four packets, holds %d and %d, want 1 and 1", a.refs.Load(), b.refs.Load())
	}
	if ps[0] != nil || ps[3] != nil {
		t.Fatal("putPackets left packets in the slice")
	}
	tr.putPackets(ps[4:])
	if a.refs.Load() != 0 || b.refs.Load() != 0 {
		t.Fatalf("after every packet, holds %d and %d", a.refs.Load(), b.refs.Load())
	}
}
