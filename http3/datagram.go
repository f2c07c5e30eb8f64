package http3

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/satquic/satquic/quic"
)

// datagramQueueLen is how many HTTP datagrams a stream holds that its
// reader has not taken: a burst of 4096 IP packets of a tunnel, about
// 24 ms of 2 Gbit/s and at most 6 MB per stream, the size of a tunnel's
// QUIC receive queue in front of it, so that the burst a full-rate tunnel
// delivers while its reader waits for a core on a busy machine fits.
// Beyond it datagrams are dropped and counted, as a router drops packets
// its queue has no room for; HTTP datagrams are unreliable anyway (RFC
// 9297 section 2).
const datagramQueueLen = 4096

// maxQueuedDatagramBytes bounds the bytes of HTTP datagrams (whole,
// Quarter Stream ID included) a connection's streams hold for their
// readers together: without it a client that opens its 100 streams and
// sends datagrams nobody reads makes the server hold 100 x 4096 of them,
// some 560 MB. 16 MiB is about three
// streams' full queues of tunnel packets, or 67 ms of 2 Gbit/s.
const maxQueuedDatagramBytes = 16 << 20

// maxQuarterStreamID is the largest Quarter Stream ID: stream IDs end at
// 2^62-1 (RFC 9297 section 2.1).
const maxQuarterStreamID = 1<<60 - 1

// datagramCounters count the HTTP datagrams a connection's demultiplexer
// dropped.
type datagramCounters struct {
	// unknown: for no stream registered now. RFC 9297 section 2.1 allows
	// buffering them for a stream not yet open; streams register before
	// their request is sent (client) or as soon as its header is read
	// (server), so that a datagram of a stream that is not registered
	// has arrived before its request or after its end, and is dropped.
	unknown atomic.Uint64
	// full: the stream's queue had no room.
	full atomic.Uint64
}

// datagramMux hands a connection's HTTP datagrams to the streams they
// belong to, by Quarter Stream ID (RFC 9297 section 2.1).
type datagramMux struct {
	dc     datagramConn
	counts *datagramCounters

	mu     sync.Mutex
	queues map[uint64]chan []byte
	queued int // bytes in the queues (maxQueuedDatagramBytes)
	// spare holds the buffers of datagrams that were read out
	// (Stream.ReadDatagram) or dropped, for the QUIC connection to reuse
	// (quic.Conn.ReceiveDatagrams), when it takes them back.
	spare [][]byte
}

// receiveBatch is how many datagrams the mux takes from a QUIC
// connection at once.
const receiveBatch = 64

func newDatagramMux(dc datagramConn, counts *datagramCounters) *datagramMux {
	return &datagramMux{dc: dc, counts: counts, queues: make(map[uint64]chan []byte)}
}

// register makes the queue of a request stream's datagrams.
func (m *datagramMux) register(id quic.StreamID) chan []byte {
	q := make(chan []byte, datagramQueueLen)
	m.mu.Lock()
	m.queues[uint64(id)/4] = q
	m.mu.Unlock()
	return q
}

// unregister drops the stream's queue and what it still holds: its
// datagrams are dropped from now on.
func (m *datagramMux) unregister(id quic.StreamID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queues[uint64(id)/4]
	if !ok {
		return
	}
	delete(m.queues, uint64(id)/4)
	for {
		select {
		case b := <-q:
			m.queued -= len(b)
			m.recycleLocked(b)
		default:
			return
		}
	}
}

// taken tells the mux that a stream's reader took b from its queue;
// recycle: the reader is done with b, which the connection may reuse.
func (m *datagramMux) taken(b []byte, recycle bool) {
	m.mu.Lock()
	m.queued -= len(b)
	if recycle {
		m.recycleLocked(b)
	}
	m.mu.Unlock()
}

// release takes back the buffers of datagrams a stream's reader held
// (Stream.HoldDatagram), which taken already counted out of the queues.
func (m *datagramMux) release(bufs [][]byte) {
	m.mu.Lock()
	for _, b := range bufs {
		m.recycleLocked(b)
	}
	m.mu.Unlock()
}

// maxSpareDatagrams bounds the buffers the mux keeps to give back to the
// connection: a few of its batches. A queue's worth would keep the peak
// of a burst (up to 6 MB) for as long as the connection lives.
const maxSpareDatagrams = 4 * receiveBatch

// recycleLocked keeps b for the connection to reuse, up to
// maxSpareDatagrams buffers; m.mu is held. When they are full and the
// connection takes buffers back at once (quic.Conn.RecycleDatagrams), they
// go to it and b starts a new batch: the readers of a tunnel's burst give
// back thousands while the mux waits for the next datagram, and those
// beyond the spares were garbage that the next burst allocated again.
func (m *datagramMux) recycleLocked(b []byte) {
	if len(m.spare) == maxSpareDatagrams {
		r, ok := m.dc.(datagramRecycler)
		if !ok {
			return
		}
		r.RecycleDatagrams(m.spare)
		clear(m.spare)
		m.spare = m.spare[:0]
	}
	m.spare = append(m.spare, b)
}

// datagramRecycler is a datagramConn that takes back buffers of datagrams
// it returned without a receive (quic.Conn.RecycleDatagrams).
type datagramRecycler interface {
	RecycleDatagrams(bs [][]byte)
}

// batchDatagramReceiver is a datagramConn that returns the datagrams
// waiting in one call and takes back the buffers of earlier ones
// (quic.Conn.ReceiveDatagrams).
type batchDatagramReceiver interface {
	ReceiveDatagrams(ctx context.Context, done, got [][]byte) ([][]byte, error)
}

// run reads the connection's datagrams until ctx ends or the connection
// does, and returns the H3_DATAGRAM_ERROR of a malformed one.
func (m *datagramMux) run(ctx context.Context) error {
	if br, ok := m.dc.(batchDatagramReceiver); ok {
		return m.runBatches(ctx, br)
	}
	for {
		b, err := m.dc.ReceiveDatagram(ctx)
		if err != nil {
			return nil
		}
		if err := m.dispatch(b); err != nil {
			return err
		}
	}
}

// runBatches is run over a connection that returns datagrams in
// batches: one call per batch, which also gives back the buffers the
// streams' readers are done with.
func (m *datagramMux) runBatches(ctx context.Context, br batchDatagramReceiver) error {
	got := make([][]byte, 0, receiveBatch)
	var done [][]byte
	for {
		m.mu.Lock()
		done, m.spare = m.spare, done[:0]
		m.mu.Unlock()
		var err error
		got, err = br.ReceiveDatagrams(ctx, done, got[:0])
		clear(done) // the connection owns them again
		for _, b := range got {
			if derr := m.dispatch(b); derr != nil {
				return derr
			}
		}
		clear(got)
		if err != nil {
			return nil
		}
	}
}

// dispatch queues one HTTP datagram, whole, for its stream (whose reader
// takes the payload out), or drops it and keeps its buffer for reuse.
func (m *datagramMux) dispatch(b []byte) error {
	qsid, _, err := parseHTTPDatagram(b)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queues[qsid]
	if !ok {
		m.counts.unknown.Add(1)
		m.recycleLocked(b)
		return nil
	}
	if m.queued+len(b) > maxQueuedDatagramBytes {
		m.counts.full.Add(1)
		m.recycleLocked(b)
		return nil
	}
	select {
	case q <- b:
		m.queued += len(b)
	default:
		m.counts.full.Add(1)
		m.recycleLocked(b)
	}
	return nil
}

// datagramPayload is the payload of an HTTP datagram dispatch queued,
// whose Quarter Stream ID it checked.
func datagramPayload(b []byte) []byte {
	_, n := parseVarint(b)
	return b[n:]
}

// parseHTTPDatagram splits an HTTP/3 datagram into its Quarter Stream ID
// and payload. A datagram too short for the ID, or with an ID no stream
// can have, is a connection error H3_DATAGRAM_ERROR (RFC 9297 section
// 2.1).
func parseHTTPDatagram(b []byte) (qsid uint64, payload []byte, err error) {
	qsid, n := parseVarint(b)
	if n == 0 {
		return 0, nil, connError(ErrCodeDatagramError, "HTTP datagram of %d bytes without a whole Quarter Stream ID", len(b))
	}
	if qsid > maxQuarterStreamID {
		return 0, nil, connError(ErrCodeDatagramError, "Quarter Stream ID %d beyond 2^60-1", qsid)
	}
	return qsid, b[n:], nil
}

// appendHTTPDatagram prefixes payload with the Quarter Stream ID of
// stream id (RFC 9297 section 2.1).
func appendHTTPDatagram(b []byte, id quic.StreamID, payload []byte) []byte {
	return append(appendVarint(b, uint64(id)/4), payload...)
}

// Errors of Stream.SendDatagram and Stream.ReceiveDatagram.
var (
	// ErrDatagramsDisabled: this endpoint did not enable HTTP datagrams
	// (Server.EnableDatagrams, Transport.EnableDatagrams), or its QUIC
	// connection carries no DATAGRAM frames.
	ErrDatagramsDisabled = errors.New("http3: HTTP datagrams not enabled")
	// ErrPeerDatagramsDisabled: the peer's SETTINGS did not allow HTTP
	// datagrams (SETTINGS_H3_DATAGRAM, RFC 9297 section 2.1.1), or have
	// not arrived yet.
	ErrPeerDatagramsDisabled = errors.New("http3: the peer did not enable HTTP datagrams")
)
