package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// streamMap holds the streams of a connection, their identifiers and
// limits (RFC 9000 sections 2.1 and 4.6), and the queues of streams with
// frames to send. Per-type arrays are indexed by streamDir.
type streamMap struct {
	c *Conn
	m map[uint64]*stream

	// Streams this endpoint opens: how many of each type, the peer's
	// limit, and the STREAMS_BLOCKED state.
	nextLocal      [2]uint64
	peerMax        [2]uint64
	blockedAt      [2]uint64
	blockedPending [2]bool

	// Streams the peer opens: how many it opened (including implicitly),
	// our limit, how many finished, and whether MAX_STREAMS is due.
	peerOpened [2]uint64
	localMax   [2]uint64
	closed     [2]uint64
	maxPending [2]bool

	// The peer's initial stream flow control limits (RFC 9000 section
	// 18.2), for streams opened from now on.
	peerInitBidiLocal, peerInitBidiRemote, peerInitUni uint64

	// sendQueue holds streams with STREAM frames to send, in round-robin
	// order; ctrlQueue those with stream control frames to send.
	sendQueue ring[*stream]
	ctrlQueue []*stream
	// writeWaiters are streams whose last write was cut short by the
	// send buffer limit (wantWritable), for wakeWriters; an entry whose
	// flag was cleared since is dropped there.
	writeWaiters []*stream
	// alloc, when set, gives the memory of each new stream
	// (Conn.SetStreamMemory).
	alloc func(id uint64) *StreamMemory
}

func (m *streamMap) init(c *Conn) {
	m.c = c
	m.m = map[uint64]*stream{}
	m.localMax = [2]uint64{c.cfg.MaxIncomingStreamsBidi, c.cfg.MaxIncomingStreamsUni}
}

// onPeerParams installs the peer's stream limits.
func (m *streamMap) onPeerParams(p *wire.TransportParameters) {
	m.peerMax = [2]uint64{p.InitialMaxStreamsBidi, p.InitialMaxStreamsUni}
	m.peerInitBidiLocal = p.InitialMaxStreamDataBidiLocal
	m.peerInitBidiRemote = p.InitialMaxStreamDataBidiRemote
	m.peerInitUni = p.InitialMaxStreamDataUni
}

// isLocal reports whether this endpoint opens stream id.
func (m *streamMap) isLocal(id uint64) bool {
	return (id&streamServerBit != 0) == !m.c.isClient
}

// localID returns the ID of the n-th local stream of a type.
func (m *streamMap) localID(n uint64, dir int) uint64 {
	id := n<<2 | uint64(dir)<<1
	if !m.c.isClient {
		id |= streamServerBit
	}
	return id
}

// streamMemory is a stream with both its parts and the first slots of
// their buffers' queues, allocated together: a request on a connection
// opens a stream, and six allocations per stream (the stream, its parts,
// the first growth of each block ring and of the received ranges) were a
// tenth of an HTTP/3 server's allocations. A ring or a range set that
// outgrows its slots moves to memory of its own.
type streamMemory struct {
	s          stream
	send       sendSide
	recv       recvSide
	sendBlocks [4]*sendBlock // a power of two, as ring requires
	recvBlocks [4]*recvBlock
	recvHave   [2]span
}

// StreamMemory is the memory of one stream, which a driver may allocate
// within its own state of the stream (Conn.SetStreamMemory): one
// allocation per stream where there were two. Its fields are the core's.
type StreamMemory struct{ m streamMemory }

// newStream creates a stream with the parts its ID gives it.
func (m *streamMap) newStream(now time.Duration, id uint64) *stream {
	var mem *streamMemory
	if m.alloc != nil {
		mem = &m.alloc(id).m
	} else {
		mem = &streamMemory{}
	}
	s := &mem.s
	s.id = id
	local, bidi := m.isLocal(id), streamIsBidi(id)
	if bidi || local {
		limit := m.peerInitUni
		switch {
		case bidi && local:
			limit = m.peerInitBidiRemote
		case bidi:
			limit = m.peerInitBidiLocal
		}
		mem.send.maxData = limit
		mem.send.buf.blocks.buf = mem.sendBlocks[:]
		s.send = &mem.send
	}
	if bidi || !local {
		cfg := &m.c.cfg
		mem.recv.win = newRecvWindow(cfg.InitialStreamReceiveWindow, cfg.MaxStreamReceiveWindow, now)
		mem.recv.buf.blocks.buf = mem.recvBlocks[:]
		mem.recv.buf.have.s = mem.recvHave[:0]
		s.recv = &mem.recv
	}
	m.m[id] = s
	return s
}

// open opens a local stream, or fails with ErrStreamLimit and queues
// STREAMS_BLOCKED (RFC 9000 section 4.6).
func (m *streamMap) open(now time.Duration, bidi bool) (uint64, error) {
	d := dirOfBidi(bidi)
	if m.nextLocal[d] >= m.peerMax[d] {
		if m.blockedAt[d] != m.peerMax[d] || !m.blockedPending[d] {
			m.blockedAt[d], m.blockedPending[d] = m.peerMax[d], true
		}
		return 0, ErrStreamLimit
	}
	id := m.localID(m.nextLocal[d], d)
	m.nextLocal[d]++
	m.newStream(now, id)
	return id, nil
}

// get returns a stream for the application, or ErrUnknownStream.
func (m *streamMap) get(id uint64) (*stream, error) {
	s := m.m[id]
	if s == nil {
		return nil, ErrUnknownStream
	}
	return s, nil
}

// part says which part of a stream a received frame addresses.
type part uint8

const (
	partRecv part = iota + 1 // STREAM, RESET_STREAM, STREAM_DATA_BLOCKED
	partSend                 // MAX_STREAM_DATA, STOP_SENDING
)

// forFrame finds the stream a received frame addresses, opening peer
// streams up to it (RFC 9000 section 3.2: opening a stream opens the lower
// ones of its type). It returns nil without error for a stream that is
// closed already: late frames for it are ignored.
func (m *streamMap) forFrame(now time.Duration, id uint64, ft wire.FrameType, p part) (*stream, error) {
	local, bidi := m.isLocal(id), streamIsBidi(id)
	if !bidi && local && p == partRecv {
		return nil, transportError(wire.CodeStreamStateError, ft, "stream %d is send-only for us", id)
	}
	if !bidi && !local && p == partSend {
		return nil, transportError(wire.CodeStreamStateError, ft, "stream %d is receive-only for us", id)
	}
	d, n := streamDir(id), id>>2
	if local {
		if n >= m.nextLocal[d] {
			// Section 19.8 and 19.10: a frame for a local stream not
			// yet opened.
			return nil, transportError(wire.CodeStreamStateError, ft, "stream %d not opened", id)
		}
		return m.m[id], nil
	}
	if n >= m.localMax[d] {
		return nil, transportError(wire.CodeStreamLimitError, ft, "stream %d beyond the limit of %d", id, m.localMax[d])
	}
	for m.peerOpened[d] <= n {
		sid := m.peerOpened[d]<<2 | id&3
		m.peerOpened[d]++
		m.newStream(now, sid)
		m.c.events.push(Event{Kind: EventStreamOpened, StreamID: sid, Bidi: bidi})
	}
	return m.m[id], nil
}

// maybeRemove forgets a stream whose parts are all in terminal states;
// a finished peer stream lets the peer open another (MAX_STREAMS, RFC 9000
// section 4.6).
func (m *streamMap) maybeRemove(s *stream) {
	if (s.send != nil && !s.send.done()) || (s.recv != nil && !s.recv.done()) {
		return
	}
	if m.m[s.id] != s {
		return
	}
	delete(m.m, s.id)
	if m.isLocal(s.id) {
		return
	}
	d := streamDir(s.id)
	m.closed[d]++
	initial := m.c.cfg.MaxIncomingStreamsBidi
	if d == 1 {
		initial = m.c.cfg.MaxIncomingStreamsUni
	}
	if next := m.closed[d] + initial; next-m.localMax[d] >= max(1, initial/4) {
		m.localMax[d] = min(next, wire.MaxStreamsLimit)
		m.maxPending[d] = true
	}
}

// queueSend puts a stream with data to send in the send queue.
func (m *streamMap) queueSend(s *stream) {
	if !s.inSendQueue && s.send != nil && s.send.hasData() {
		s.inSendQueue = true
		m.sendQueue.pushBack(s)
	}
}

// queueCtrl puts a stream with control frames to send in the control
// queue.
func (m *streamMap) queueCtrl(s *stream) {
	if !s.inCtrlQueue {
		s.inCtrlQueue = true
		m.ctrlQueue = append(m.ctrlQueue, s)
	}
}

// notifyReadable queues EventStreamReadable unless one is pending.
func (m *streamMap) notifyReadable(s *stream) {
	if s.recv != nil && s.recv.readable() && !s.readableQueued {
		s.readableQueued = true
		m.c.events.push(Event{Kind: EventStreamReadable, StreamID: s.id})
	}
}

// waitWritable marks s's writer as waiting for room in its send buffer.
func (m *streamMap) waitWritable(s *stream) {
	if !s.send.wantWritable {
		s.send.wantWritable = true
		m.writeWaiters = append(m.writeWaiters, s)
	}
}

// wakeWriters tells the writers waiting for room that there is some when
// the send buffer limit, which follows the congestion window, rose above
// what they buffered. The acknowledgements that free room do not cover
// every case: Careful Resume's jump (RFC 9959 section 3.3) multiplies the
// window while nothing sent since the first round trip is acknowledged,
// and a writer that waited for an acknowledgement would leave the
// unvalidated window without data for a round trip.
func (m *streamMap) wakeWriters() {
	if len(m.writeWaiters) == 0 {
		return
	}
	keep := m.writeWaiters[:0]
	for _, s := range m.writeWaiters {
		sd := s.send
		switch {
		case sd == nil || !sd.wantWritable || sd.reset || m.m[s.id] != s:
			continue
		case m.sendRoom(&sd.buf) > 0:
			sd.wantWritable = false
			m.notifyWritable(s)
			continue
		}
		keep = append(keep, s)
	}
	clear(m.writeWaiters[len(keep):])
	m.writeWaiters = keep
}

// notifyWritable queues EventStreamWritable unless one is pending.
func (m *streamMap) notifyWritable(s *stream) {
	if !s.writableQueued {
		s.writableQueued = true
		m.c.events.push(Event{Kind: EventStreamWritable, StreamID: s.id})
	}
}

// onEventPolled clears the pending flag of a stream event.
func (m *streamMap) onEventPolled(ev Event) {
	s := m.m[ev.StreamID]
	if s == nil {
		return
	}
	switch ev.Kind {
	case EventStreamReadable:
		s.readableQueued = false
	case EventStreamWritable:
		s.writableQueued = false
	}
}

// sendBufferLimit is how many bytes a stream may buffer: twice the
// congestion window, so that the sender never starves while acknowledgements
// are in flight, within the configured bounds.
func (m *streamMap) sendBufferLimit() uint64 {
	cfg := &m.c.cfg
	return uint64(min(max(2*m.c.sender.CongestionWindow(), cfg.MinSendBuffer), cfg.MaxSendBuffer))
}

// sendRoom is how many more bytes a stream whose send buffer is b may
// buffer: its bytes not yet acknowledged stay within sendBufferLimit, and
// all it holds within MaxSendBuffer. The bytes acknowledged above a gap do
// not count toward the first bound: with a packet lost twice over a long
// path, the gap lasts three round trips or more, and counting them held a
// BBR sender whose window was one bandwidth-delay product to a buffer of
// two for as long (geo-lossy without FEC, 100 MB: a resumed connection
// stalled 200 ms, its Startup's samples marked application limited).
func (m *streamMap) sendRoom(b *sendBuffer) uint64 {
	limit := m.sendBufferLimit()
	room := limit - min(limit, b.unacked())
	held := uint64(m.c.cfg.MaxSendBuffer)
	return min(room, held-min(held, b.buffered()))
}

// unackedBytes sums the stream data written and not yet acknowledged of
// the streams whose sending part was not reset (a stream stays in m until
// its data and FIN are acknowledged).
func (m *streamMap) unackedBytes() uint64 {
	var n uint64
	for _, s := range m.m {
		if sd := s.send; sd != nil && !sd.reset {
			n += sd.buf.buffered()
		}
	}
	return n
}
