package quic

import (
	"sync"
	"sync/atomic"

	"github.com/satquic/satquic/quic/internal/udp"
)

// A reader hands the datagrams of a busy flow to their connection where
// the socket put them, without copying them: with GRO, one read buffer
// holds up to 64 KiB of one peer's datagrams, and the copy into a packet
// of each cost a tenth of a bulk receiver's CPU. A read buffer is then
// an rxChunk, counted: the reader holds it while it is among its
// messages, and each packet referring into it holds it until its
// connection has processed the datagram. The reader receives into a
// buffer only while nothing else holds it, and swaps a held one for a
// fresh one first; the last holder gives it back to a pool.

// rxChunk is one read buffer and the holders of its datagrams.
type rxChunk struct {
	buf  []byte
	refs atomic.Int32
	pool *sync.Pool // where the last holder puts it, or nil
}

// Read buffers of the two sizes udp lays out are pooled for every
// Transport of the process, as received packets are.
var (
	groChunks   = sync.Pool{}
	dgramChunks = sync.Pool{}
)

// newRxChunk returns a buffer of size bytes held once, by the reader.
func newRxChunk(size int) *rxChunk {
	var pool *sync.Pool
	switch size {
	case udp.GROBufferSize:
		pool = &groChunks
	case udp.DefaultMaxDatagramSize:
		pool = &dgramChunks
	}
	var c *rxChunk
	if pool != nil {
		if v := pool.Get(); v != nil {
			c = v.(*rxChunk)
		}
	}
	if c == nil {
		c = &rxChunk{buf: make([]byte, size), pool: pool}
	}
	c.refs.Store(1)
	return c
}

// hold adds n holds.
func (c *rxChunk) hold(n int32) { c.refs.Add(n) }

// release drops n holds; the last one returns the buffer to its pool.
func (c *rxChunk) release(n int32) {
	if c.refs.Add(-n) == 0 && c.pool != nil {
		c.pool.Put(c)
	}
}

// busy reports whether anyone but the reader holds the chunk. Only the
// reader adds holds, so a false answer stays true until it hands a
// datagram on.
func (c *rxChunk) busy() bool { return c.refs.Load() > 1 }

// rxSlots are a reader's messages and the chunks behind their buffers.
type rxSlots struct {
	msgs   []udp.Message
	chunks []*rxChunk // chunks[i] is behind msgs[i].Buf, nil if none
	// filled counts, during one batch, the bytes delivered from each
	// message's buffer.
	filled []int
}

// newRxSlots lays out n messages for conn as udp.Conn.NewReadBatch would,
// with counted buffers, and lets go of the chunks of old, if any, which
// the socket must have no datagrams left in (udp.Conn.Pending).
func newRxSlots(conn *udp.Conn, n int, old *rxSlots) *rxSlots {
	if old != nil {
		old.close()
	}
	s := &rxSlots{msgs: make([]udp.Message, n), chunks: make([]*rxChunk, n), filled: make([]int, n)}
	bufs, size := conn.ReadBufferLayout(n)
	for i := range bufs {
		s.install(i, size)
	}
	return s
}

func (s *rxSlots) install(i, size int) {
	c := newRxChunk(size)
	s.chunks[i] = c
	s.msgs[i].Buf = c.buf
}

// prepare readies the buffers for the next read: when the socket has no
// datagrams waiting in them, every buffer a connection still holds is
// replaced, so that nothing is received into memory a connection has yet
// to read.
func (s *rxSlots) prepare(conn *udp.Conn) {
	if conn.Pending() {
		return
	}
	for i, c := range s.chunks {
		if c != nil && c.busy() {
			c.release(1)
			s.install(i, len(c.buf))
		}
	}
}

// count records how many bytes the batch msgs[:n] delivered from each
// buffer, for byReference.
func (s *rxSlots) count(n int) {
	clear(s.filled)
	for i := range n {
		s.filled[s.msgs[i].BufIndex] += len(s.msgs[i].Data)
	}
}

// byReference returns the chunk to hand m's datagram on in, or nil when
// it is better copied: when the batch delivered less than an eighth of
// the buffer's size from it (a lone datagram in a 64 KiB GRO buffer, a
// short ACK), so that a connection slow to read its datagrams keeps at
// most eight times their size busy.
func (s *rxSlots) byReference(m *udp.Message) *rxChunk {
	if s == nil {
		return nil // a reader without counted buffers: always copied
	}
	c := s.chunks[m.BufIndex]
	if c == nil || s.filled[m.BufIndex]*8 < len(c.buf) {
		return nil
	}
	return c
}

// close lets go of every chunk: the reader is done.
func (s *rxSlots) close() {
	for _, c := range s.chunks {
		if c != nil {
			c.release(1)
		}
	}
	*s = rxSlots{}
}
