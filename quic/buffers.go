package quic

import (
	"net/netip"
	"slices"
	"sync"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/udp"
)

const (
	// sendBatchSize is how many datagrams a connection builds before one
	// WriteBatch: two GSO sends of the 64 segments a send may carry.
	// A GSO send also stops at 64 KiB, 45 datagrams of 1452 bytes: a
	// batch of 64 went out as runs of 45 and 19, where one of 128 goes
	// as 45, 45 and 38, fewer and larger buffers for both ends' kernels
	// and for the receiver's GRO reads.
	sendBatchSize = 2 * udp.MaxGSOSegments
	// rxBufSize is the pooled buffer for a received datagram: any
	// Ethernet-sized one. Larger datagrams get a buffer of their own.
	rxBufSize = 1536
	// maxInbox bounds the datagrams waiting for a connection's goroutine,
	// as a socket buffer would: a connection that falls behind loses
	// packets rather than memory.
	maxInbox = 8192
)

// The pools are shared by every Transport of the process: a client that
// dials many short connections, each on a Transport of its own (DialAddr),
// reuses the buffers of the connections before it instead of allocating
// its own and leaving them to the garbage collector.
var (
	rxPackets   sync.Pool // *packet
	sendBatches sync.Pool // *sendBatch
)

// packet is a received datagram on its way from the reader to a
// connection's goroutine. It either refers to the datagram where the
// socket put it, in a read buffer (an rxChunk) that the packet keeps busy
// until the connection is done with it, or holds a copy in a buffer of its
// own: the reader copies datagrams whose read buffer they would keep busy
// for little data (see rxSlots.byReference).
type packet struct {
	buf   []byte   // the packet's own storage for a copy
	data  []byte   // the datagram: in buf, or in chunk
	chunk *rxChunk // the read buffer data refers to, or nil
	from  netip.AddrPort
	ecn   ecn.Codepoint // the codepoint it arrived with
}

// datagram is the packet as the core takes it. The core may decrypt it
// in place: a datagram is only ever handed to one connection by
// reference (offerReset copies).
func (p *packet) datagram() core.Datagram {
	return core.Datagram{Addr: p.from, Data: p.data, ECN: p.ecn}
}

func newPacket(from netip.AddrPort, cp ecn.Codepoint) *packet {
	var p *packet
	if v := rxPackets.Get(); v != nil {
		p = v.(*packet)
	} else {
		p = &packet{buf: make([]byte, rxBufSize)}
	}
	p.from, p.ecn = from, cp
	return p
}

// getPacket returns a packet holding a copy of data.
func (t *Transport) getPacket(data []byte, from netip.AddrPort, cp ecn.Codepoint) *packet {
	p := newPacket(from, cp)
	if len(data) > len(p.buf) {
		p.data = slices.Clone(data)
		return p
	}
	p.data = p.buf[:copy(p.buf, data)]
	return p
}

// refPacket returns a packet referring to data inside chunk, which it
// keeps busy from holdChunks until putPacket.
func (t *Transport) refPacket(data []byte, chunk *rxChunk, from netip.AddrPort, cp ecn.Codepoint) *packet {
	p := newPacket(from, cp)
	p.data, p.chunk = data, chunk
	return p
}

// holdChunks takes the holds of the packets of ps that refer into read
// buffers, before they are handed on: one atomic addition for each run of
// packets in one buffer (the datagrams of a GRO buffer come together),
// rather than one per datagram on a counter that the connection's
// goroutine changes too, on another core.
func holdChunks(ps []*packet) {
	for i := 0; i < len(ps); {
		c, j := ps[i].chunk, i+1
		for j < len(ps) && ps[j].chunk == c {
			j++
		}
		if c != nil {
			c.hold(int32(j - i))
		}
		i = j
	}
}

func (t *Transport) putPacket(p *packet) {
	if p.chunk != nil {
		p.chunk.release(1)
	}
	p.data, p.chunk = nil, nil
	rxPackets.Put(p)
}

// putPackets returns the packets of ps, as putPacket does, with one
// release for each run of packets in one read buffer, and clears ps.
func (t *Transport) putPackets(ps []*packet) {
	for i := 0; i < len(ps); {
		c, j := ps[i].chunk, i+1
		for j < len(ps) && ps[j].chunk == c {
			j++
		}
		if c != nil {
			c.release(int32(j - i))
		}
		for _, p := range ps[i:j] {
			p.data, p.chunk = nil, nil
			rxPackets.Put(p)
		}
		i = j
	}
	clear(ps)
}

// sendBatch is the room a connection builds datagrams in. Batches are
// pooled, so memory follows the connections sending at the same moment
// rather than all connections.
type sendBatch struct {
	msgs []udp.Message
	bufs [][]byte
}

func (t *Transport) getSendBatch() *sendBatch {
	if v := sendBatches.Get(); v != nil {
		return v.(*sendBatch)
	}
	// The buffers come as datagrams need them (buf): a handshake
	// sends a few datagrams per step, and a batch made for it after
	// the garbage collector emptied the pool would otherwise cost
	// 192 KiB of which it uses 6.
	return &sendBatch{msgs: make([]udp.Message, sendBatchSize), bufs: make([][]byte, sendBatchSize)}
}

// buf is the batch's i-th datagram buffer, made on first use with room
// for an Ethernet-sized datagram; a larger one grows it once, and the
// batch keeps it.
func (b *sendBatch) buf(i int) []byte {
	if b.bufs[i] == nil {
		b.bufs[i] = make([]byte, 0, rxBufSize)
	}
	return b.bufs[i]
}

// putSendBatch returns a batch whose first n messages were used: only
// those hold references to clear.
func (t *Transport) putSendBatch(b *sendBatch, n int) {
	clear(b.msgs[:n])
	sendBatches.Put(b)
}
