package http3

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/satquic/satquic/quic"
)

// Stream is the request stream of an extended CONNECT (RFC 9220) after
// its 2xx response: a tunnel that stays open until either end closes
// it. Read and Write carry the payloads of its DATA frames, which for
// the protocols that use the capsule protocol are a sequence of
// capsules (RFC 9297 section 3.1: see ReadCapsule and WriteCapsule).
// SendDatagram and ReceiveDatagram carry the HTTP datagrams bound to the
// stream (RFC 9297 section 2).
//
// Read and Write may be called from two goroutines at once, and
// ReceiveDatagram and SendDatagram from any number. The stream's owner
// must Close it: neither the end of the handler nor the end of the
// context given to Transport.ExtendedConnect does.
type Stream struct {
	c  *conn
	st *quic.Stream
	// w writes to the stream: the guard of the server's timeouts, or
	// the QUIC stream itself on a client.
	w io.Writer
	// b reads the DATA frames, then the trailers, if any.
	b *body
	// datagrams is the stream's queue of HTTP datagrams, or nil if
	// this endpoint did not advertise SETTINGS_H3_DATAGRAM.
	datagrams chan []byte

	ctx    context.Context
	cancel context.CancelCauseFunc

	wmu sync.Mutex // one DATA frame at a time

	mu     sync.Mutex
	closed bool // Close or CancelWrite was called
}

// errStreamClosed: the Stream was closed by this endpoint.
var errStreamClosed = errors.New("http3: stream closed")

// newStream makes the Stream of st. Its context ends with the
// connection at the latest; when it ends the stream's datagrams are no
// longer taken.
func newStream(c *conn, st *quic.Stream, w io.Writer, b *body, datagrams chan []byte) *Stream {
	s := &Stream{c: c, st: st, w: w, b: b, datagrams: datagrams}
	s.ctx, s.cancel = context.WithCancelCause(context.Background())
	// The connection's end, with its HTTP/3 error code.
	stop := context.AfterFunc(c.qc.Context(), func() { s.cancel(fromQUIC(context.Cause(c.qc.Context()))) })
	context.AfterFunc(s.ctx, func() { stop() })
	if datagrams != nil {
		context.AfterFunc(s.ctx, func() { c.datagrams.unregister(st.StreamID()) })
	}
	return s
}

// Context ends when the stream does: Close, CancelRead or CancelWrite,
// the end of what the peer sends (its FIN or a reset), a failed write,
// or the end of the connection. context.Cause tells which.
func (s *Stream) Context() context.Context { return s.ctx }

// Read reads the payloads of the DATA frames the peer sends, the
// capsule stream of RFC 9297 section 3.1. It returns io.EOF once the
// peer closed its side, which ends the stream's Context.
func (s *Stream) Read(p []byte) (int, error) {
	n, err := s.b.Read(p)
	if err != nil {
		if s.isClosed() && isDeadline(err) {
			// Close woke the read.
			err = errStreamClosed
		}
		s.cancel(err)
	}
	return n, err
}

// Write sends p as one DATA frame. A failed write ends the stream's
// Context.
func (s *Stream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	frame := make([]byte, 0, dataHeaderRoom+len(p))
	frame = appendFrameHeader(frame, frameData, uint64(len(p)))
	frame = append(frame, p...)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.isClosed() {
		return 0, errStreamClosed
	}
	if _, err := s.w.Write(frame); err != nil {
		err = fromQUIC(err)
		s.cancel(err)
		return 0, err
	}
	return len(p), nil
}

func (s *Stream) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close ends the stream: its sending side with a FIN, which tells the
// peer the tunnel is closed (RFC 9114 section 4.4), and its receiving
// side with STOP_SENDING H3_NO_ERROR. It ends the stream's Context.
func (s *Stream) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	err := s.st.Close()
	s.st.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
	wakeReader(s.st)
	s.cancel(errStreamClosed)
	return err
}

// CancelRead stops reading with code, which the peer receives in
// STOP_SENDING, and ends the stream's Context.
func (s *Stream) CancelRead(code ErrCode) {
	s.st.CancelRead(quic.StreamErrorCode(code))
	wakeReader(s.st)
	s.cancel(&Error{Code: code})
}

// CancelWrite resets the sending side with code (RESET_STREAM) and ends
// the stream's Context.
func (s *Stream) CancelWrite(code ErrCode) {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.st.CancelWrite(quic.StreamErrorCode(code))
	s.cancel(&Error{Code: code})
}

// SendDatagram sends b as an HTTP datagram of this stream, in one QUIC
// DATAGRAM frame prefixed with the stream's Quarter Stream ID (RFC 9297
// section 2.1). Both ends must have advertised SETTINGS_H3_DATAGRAM,
// and the stream must be open (section 2.1: only while its sending side
// is). Datagrams are unreliable: the peer may drop them.
func (s *Stream) SendDatagram(b []byte) error {
	if s.c.datagrams == nil {
		return ErrDatagramsDisabled
	}
	if p, ok := s.c.peerSettings(); !ok || !p.h3Datagram {
		return ErrPeerDatagramsDisabled
	}
	if s.ctx.Err() != nil {
		return context.Cause(s.ctx)
	}
	return s.c.datagrams.dc.SendDatagram(appendHTTPDatagram(make([]byte, 0, 8+len(b)), s.st.StreamID(), b))
}

// MaxDatagramPayloadSize is the largest b SendDatagram takes now: what a
// QUIC DATAGRAM frame carries on the connection's current path (its MTU
// may rise or fall) less the stream's Quarter Stream ID. It is 0 when
// datagrams are not available or the size cannot be told.
func (s *Stream) MaxDatagramPayloadSize() int {
	if s.c.datagrams == nil {
		return 0
	}
	sc, ok := s.c.datagrams.dc.(sizedDatagramConn)
	if !ok {
		return 0
	}
	return max(sc.MaxDatagramPayloadSize()-varintLen(uint64(s.st.StreamID())/4), 0)
}

// SendDatagrams sends payloads as HTTP datagrams, in order, as
// SendDatagram does each, handing them to the QUIC connection in one call
// where it takes several at once. It stops at the first refusal and
// returns how many it sent, and that refusal, which concerns
// payloads[n] alone when it is a *quic.DatagramTooLargeError.
func (s *Stream) SendDatagrams(payloads [][]byte) (int, error) {
	return s.sendDatagrams(context.Background(), nil, payloads, false)
}

// SendDatagramsWait is SendDatagrams that waits for room in the QUIC
// connection's send queue, until ctx ends, rather than have it drop its
// oldest datagrams (quic.Conn.SendDatagramsWait).
func (s *Stream) SendDatagramsWait(ctx context.Context, payloads [][]byte) (int, error) {
	return s.sendDatagrams(ctx, nil, payloads, true)
}

// SendPrefixedDatagrams is SendDatagrams of payloads that each begin with
// prefix, then hold bs[i]: a protocol over HTTP datagrams puts its own
// header in front (CONNECT-IP's Context ID, RFC 9484 section 6) without a
// copy, since the QUIC connection joins the parts as it queues them.
func (s *Stream) SendPrefixedDatagrams(prefix []byte, bs [][]byte) (int, error) {
	return s.sendDatagrams(context.Background(), prefix, bs, false)
}

// SendPrefixedDatagramsWait is SendPrefixedDatagrams that waits for room
// as SendDatagramsWait does.
func (s *Stream) SendPrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error) {
	return s.sendDatagrams(ctx, prefix, bs, true)
}

// waitingDatagramConn is a datagramConn that waits for room
// (quic.Conn.SendDatagramsWait).
type waitingDatagramConn interface {
	SendDatagramsWait(ctx context.Context, bs [][]byte) (int, error)
}

// prefixedDatagramConn is a datagramConn that puts a prefix in front of
// each datagram of a batch as it queues them
// (quic.Conn.SendPrefixedDatagrams and SendPrefixedDatagramsWait).
type prefixedDatagramConn interface {
	SendPrefixedDatagrams(prefix []byte, bs [][]byte) (int, error)
	SendPrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error)
}

// sendDatagrams frames payloads, each after inner (nil: none), and hands
// them over in one call, waiting for room until ctx ends when asked to
// and the connection can.
func (s *Stream) sendDatagrams(ctx context.Context, inner []byte, payloads [][]byte, wait bool) (int, error) {
	if s.c.datagrams == nil {
		return 0, ErrDatagramsDisabled
	}
	if p, ok := s.c.peerSettings(); !ok || !p.h3Datagram {
		return 0, ErrPeerDatagramsDisabled
	}
	if s.ctx.Err() != nil {
		return 0, context.Cause(s.ctx)
	}
	dc := s.c.datagrams.dc
	wc, waits := dc.(waitingDatagramConn)
	waits = waits && wait
	bc, batches := dc.(batchDatagramConn)
	// The connection copies each datagram into its queue: one that
	// puts the Quarter Stream ID (and inner) in front as it does needs no
	// other copy.
	prefix := append(appendVarint(make([]byte, 0, 8+len(inner)), uint64(s.st.StreamID())/4), inner...)
	if !batches && !waits {
		for i, b := range payloads {
			if err := dc.SendDatagram(append(prefix[:len(prefix):len(prefix)], b...)); err != nil {
				return i, err
			}
		}
		return len(payloads), nil
	}
	if pc, ok := dc.(prefixedDatagramConn); ok {
		if waits {
			return pc.SendPrefixedDatagramsWait(ctx, prefix, payloads)
		}
		return pc.SendPrefixedDatagrams(prefix, payloads)
	}
	// One buffer for the batch: the connection copies each datagram.
	size := 0
	for _, b := range payloads {
		size += len(prefix) + len(b)
	}
	buf := make([]byte, 0, size)
	dgrams := make([][]byte, len(payloads))
	for i, b := range payloads {
		start := len(buf)
		buf = append(append(buf, prefix...), b...)
		dgrams[i] = buf[start:]
	}
	if waits {
		return wc.SendDatagramsWait(ctx, dgrams)
	}
	return bc.SendDatagrams(dgrams)
}

// TryReceiveDatagram returns the stream's next HTTP datagram if one is
// waiting, without waiting for one: a reader that took a datagram uses it
// to take the others that arrived with it in one go.
func (s *Stream) TryReceiveDatagram() ([]byte, bool) {
	if s.datagrams == nil {
		return nil, false
	}
	select {
	case b := <-s.datagrams:
		s.c.datagrams.taken(b, false)
		return datagramPayload(b), true
	default:
		return nil, false
	}
}

// ReceiveDatagram returns the payload of the next HTTP datagram of this
// stream. It waits until one arrives, ctx ends or the stream does.
func (s *Stream) ReceiveDatagram(ctx context.Context) ([]byte, error) {
	b, err := s.nextDatagram(ctx)
	if err != nil {
		return nil, err
	}
	s.c.datagrams.taken(b, false)
	return datagramPayload(b), nil
}

// ReadDatagram is ReceiveDatagram that copies the payload into p and
// returns its length, so that the connection reuses the datagram's
// buffer: a tunnel's reader allocates nothing per packet. A p too short
// gives io.ErrShortBuffer with p filled.
func (s *Stream) ReadDatagram(ctx context.Context, p []byte) (int, error) {
	b, err := s.nextDatagram(ctx)
	if err != nil {
		return 0, err
	}
	return s.copyOut(p, b)
}

// TryReadDatagram is ReadDatagram when a datagram is waiting, and false at
// once otherwise.
func (s *Stream) TryReadDatagram(p []byte) (int, bool, error) {
	if s.datagrams == nil {
		return 0, false, nil
	}
	select {
	case b := <-s.datagrams:
		n, err := s.copyOut(p, b)
		return n, true, err
	default:
		return 0, false, nil
	}
}

// copyOut copies the payload of a datagram taken from the queue into p
// and gives its buffer back.
func (s *Stream) copyOut(p, b []byte) (int, error) {
	payload := datagramPayload(b)
	n := copy(p, payload)
	short := n < len(payload)
	s.c.datagrams.taken(b, true)
	if short {
		return n, io.ErrShortBuffer
	}
	return n, nil
}

// HoldDatagram is ReceiveDatagram that lends the datagram rather than
// give it: payload lies in buf, the buffer the QUIC connection received
// it in, which the caller hands back with ReleaseDatagrams once it is done
// with payload (and must not touch afterwards), so that the connection
// reuses it. A tunnel's end writes each packet into its device straight
// from that buffer, with no copy between.
func (s *Stream) HoldDatagram(ctx context.Context) (payload, buf []byte, err error) {
	b, err := s.nextDatagram(ctx)
	if err != nil {
		return nil, nil, err
	}
	s.c.datagrams.taken(b, false)
	return datagramPayload(b), b, nil
}

// TryHoldDatagram is HoldDatagram when a datagram is waiting, and false at
// once otherwise.
func (s *Stream) TryHoldDatagram() (payload, buf []byte, ok bool) {
	if s.datagrams == nil {
		return nil, nil, false
	}
	select {
	case b := <-s.datagrams:
		s.c.datagrams.taken(b, false)
		return datagramPayload(b), b, true
	default:
		return nil, nil, false
	}
}

// ReleaseDatagrams gives back the buffers of datagrams HoldDatagram or
// TryHoldDatagram lent, for the connection to reuse: each once.
func (s *Stream) ReleaseDatagrams(bufs [][]byte) {
	if s.c.datagrams != nil {
		s.c.datagrams.release(bufs)
	}
}

// nextDatagram waits for the stream's next queued HTTP datagram, whole.
func (s *Stream) nextDatagram(ctx context.Context) ([]byte, error) {
	if s.datagrams == nil {
		return nil, ErrDatagramsDisabled
	}
	select {
	case b := <-s.datagrams:
		return b, nil
	default:
	}
	select {
	case b := <-s.datagrams:
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.ctx.Done():
		return nil, context.Cause(s.ctx)
	}
}
