package quic

import (
	"net/netip"
	"sync"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/udp"
)

const (
	// sendBatchSize is how many datagrams a connection builds before one
	// WriteBatch: up to the 64 segments of one GSO send.
	sendBatchSize = udp.MaxGSOSegments
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
// connection's goroutine. The reader's batch buffers are reused at once,
// so the datagram is copied: a memcpy costs far less than the decryption
// that follows it.
type packet struct {
	buf  []byte
	n    int
	from netip.AddrPort
	ecn  ecn.Codepoint // the codepoint it arrived with
}

func (p *packet) data() []byte { return p.buf[:p.n] }

// datagram is the packet as the core takes it.
func (p *packet) datagram() core.Datagram {
	return core.Datagram{Addr: p.from, Data: p.data(), ECN: p.ecn}
}

// getPacket returns a packet holding a copy of data.
func (t *Transport) getPacket(data []byte, from netip.AddrPort, cp ecn.Codepoint) *packet {
	var p *packet
	if len(data) <= rxBufSize {
		if v := rxPackets.Get(); v != nil {
			p = v.(*packet)
		} else {
			p = &packet{buf: make([]byte, rxBufSize)}
		}
	} else {
		p = &packet{buf: make([]byte, len(data))}
	}
	p.n = copy(p.buf, data)
	p.from, p.ecn = from, cp
	return p
}

func (t *Transport) putPacket(p *packet) {
	if len(p.buf) == rxBufSize {
		rxPackets.Put(p)
	}
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
	b := &sendBatch{msgs: make([]udp.Message, sendBatchSize), bufs: make([][]byte, sendBatchSize)}
	// Room for an Ethernet-sized datagram; a larger one grows its
	// buffer once, and the batch keeps it.
	for i := range b.bufs {
		b.bufs[i] = make([]byte, 0, rxBufSize)
	}
	return b
}

func (t *Transport) putSendBatch(b *sendBatch) {
	for i := range b.msgs {
		b.msgs[i] = udp.Message{}
	}
	sendBatches.Put(b)
}
