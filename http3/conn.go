package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/satquic/satquic/quic"
)

// Unidirectional stream types (RFC 9114 section 6.2, RFC 9204 section
// 4.2).
const (
	streamControl      = 0x00
	streamPush         = 0x01
	streamQPACKEncoder = 0x02
	streamQPACKDecoder = 0x03
)

// greaseCounter varies the reserved identifiers each connection sends.
var greaseCounter atomic.Uint64

// conn is the part of an HTTP/3 connection that clients and servers
// share: this endpoint's control stream, and the peer's unidirectional
// streams (control, QPACK encoder and decoder, and the unknown types it
// may open).
type conn struct {
	qc       *quic.Conn
	isServer bool
	local    settings
	// onGoAway, if set, learns of each GOAWAY the peer sends, with its
	// stream or push ID (already validated).
	onGoAway func(id uint64)
	// datagrams demultiplexes the HTTP datagrams of the connection's
	// streams, if this endpoint advertised SETTINGS_H3_DATAGRAM.
	datagrams *datagramMux
	// quicDatagrams reports whether QUIC DATAGRAM frames were
	// negotiated on the connection; wantDatagrams, that this endpoint
	// was asked to use HTTP datagrams.
	quicDatagrams func() bool
	wantDatagrams bool
	// settingsReady is closed when the peer's SETTINGS arrived.
	settingsReady chan struct{}

	ctrlMu sync.Mutex
	ctrl   *quic.SendStream

	mu           sync.Mutex
	peer         settings
	gotSettings  bool
	peerStreams  [4]bool // control, push, encoder, decoder seen
	peerGoAway   uint64  // the last GOAWAY's ID, if gotGoAway
	gotGoAway    bool
	maxPushID    uint64 // a server's record of the client's MAX_PUSH_ID
	gotMaxPushID bool

	wg sync.WaitGroup // goroutines reading the peer's streams

	tlsOnce  sync.Once
	tlsState *tls.ConnectionState
}

// tls returns the connection's TLS state, which requests and responses
// share, as net/http's do, once the handshake completed. Before, each
// gets the state so far, whose HandshakeComplete is false: a request that
// came in 0-RTT.
func (c *conn) tls() *tls.ConnectionState {
	if !handshakeDone(c.qc) {
		st := c.qc.ConnectionState().TLS
		return &st
	}
	c.tlsOnce.Do(func() {
		st := c.qc.ConnectionState().TLS
		c.tlsState = &st
	})
	return c.tlsState
}

func newConn(qc *quic.Conn, isServer bool, local settings) *conn {
	local.grease = greaseID(greaseCounter.Add(1) % 64)
	return &conn{
		qc: qc, isServer: isServer, local: local,
		quicDatagrams: func() bool { return quicDatagramsSupported(qc) },
		settingsReady: make(chan struct{}),
	}
}

// enableDatagrams advertises SETTINGS_H3_DATAGRAM and demultiplexes the
// HTTP datagrams that arrive, if the QUIC connection negotiated DATAGRAM
// frames: RFC 9297 section 2.1.1 lets only an endpoint that sent
// max_datagram_frame_size advertise the setting. It runs before start.
func (c *conn) enableDatagrams(src datagramSource, counts *datagramCounters) {
	if src == nil {
		src = quicDatagramSource
	}
	dc, negotiated := src(c.qc)
	c.quicDatagrams = negotiated
	c.wantDatagrams = true
	if dc == nil || !negotiated() {
		return
	}
	c.local.h3Datagram = true
	c.datagrams = newDatagramMux(dc, counts)
}

// waitSettings waits for the peer's SETTINGS, which RFC 9220 section 3
// requires before an extended CONNECT, and returns them.
func (c *conn) waitSettings(ctx context.Context) (settings, error) {
	select {
	case <-c.settingsReady:
		s, _ := c.peerSettings()
		return s, nil
	case <-ctx.Done():
		return settings{}, ctx.Err()
	case <-c.qc.Context().Done():
		return settings{}, fromQUIC(context.Cause(c.qc.Context()))
	}
}

// start opens the control stream with this endpoint's SETTINGS (RFC 9114
// section 6.2.1) and starts reading the peer's unidirectional streams.
// No QPACK streams are opened: this endpoint's decoder offers no dynamic
// table and its encoder uses none (RFC 9204 section 4.2).
func (c *conn) start() error {
	st, err := c.qc.OpenUniStreamSync(c.qc.Context())
	if err != nil {
		return err
	}
	b := appendVarint(nil, streamControl)
	b = appendSettingsFrame(b, c.local)
	// A frame of a reserved type, which the peer must ignore (section
	// 7.2.8).
	b = appendFrameHeader(b, c.local.grease, 1)
	b = append(b, 0)
	c.ctrlMu.Lock()
	c.ctrl = st
	_, err = st.Write(b)
	c.ctrlMu.Unlock()
	if err != nil {
		return err
	}
	c.wg.Add(1)
	go c.acceptUniStreams()
	if c.datagrams != nil {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.fail(c.datagrams.run(c.qc.Context()))
		}()
	}
	return nil
}

// sendGoAway sends a GOAWAY frame on the control stream.
func (c *conn) sendGoAway(id uint64) error {
	c.ctrlMu.Lock()
	defer c.ctrlMu.Unlock()
	if c.ctrl == nil {
		return errors.New("http3: no control stream")
	}
	_, err := c.ctrl.Write(appendIDFrame(nil, frameGoAway, id))
	return err
}

// fail closes the connection with e's code. Errors of the quic package
// (the connection or a critical stream ended) are not reported again.
func (c *conn) fail(err error) {
	e, ok := asH3(err)
	if !ok || e.Remote {
		return
	}
	_ = c.qc.CloseWithError(quic.ApplicationErrorCode(e.Code), e.Message)
}

// closed reports whether the quic connection ended.
func (c *conn) closed() bool { return c.qc.Context().Err() != nil }

// peerSettings returns the peer's settings, and whether they arrived.
func (c *conn) peerSettings() (settings, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peer, c.gotSettings
}

func (c *conn) acceptUniStreams() {
	defer c.wg.Done()
	for {
		rs, err := c.qc.AcceptUniStream(context.Background())
		if err != nil {
			return
		}
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.fail(c.handleUniStream(rs))
		}()
	}
}

// handleUniStream reads a peer's unidirectional stream until it ends; the
// error it returns, if an *Error, closes the connection.
func (c *conn) handleUniStream(rs *quic.ReceiveStream) error {
	r := bufio.NewReaderSize(rs, 512)
	typ, err := readVarint(r)
	if err != nil {
		// A stream closed or reset before its type is tolerated (RFC
		// 9114 section 6.2).
		rs.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
		return nil
	}
	if typ > streamQPACKDecoder {
		// Unknown and reserved types: abort reading (section 6.2).
		rs.CancelRead(quic.StreamErrorCode(ErrCodeStreamCreationError))
		return nil
	}
	if typ == streamPush {
		if c.isServer {
			return connError(ErrCodeStreamCreationError, "push stream from a client")
		}
		// This client never sends MAX_PUSH_ID, so every push ID is
		// above the maximum (RFC 9114 section 4.6).
		return connError(ErrCodeIDError, "push stream without MAX_PUSH_ID")
	}
	c.mu.Lock()
	dup := c.peerStreams[typ]
	c.peerStreams[typ] = true
	c.mu.Unlock()
	if dup {
		// RFC 9114 section 6.2.1, RFC 9204 section 4.2.
		return connError(ErrCodeStreamCreationError, "second stream of type %#x", typ)
	}
	switch typ {
	case streamControl:
		err = c.readControlStream(r)
	case streamQPACKEncoder:
		err = c.readEncoderStream(r)
	default:
		err = c.readDecoderStream(r)
	}
	return c.criticalStreamError(err)
}

// criticalStreamError: a control or QPACK stream that ends, cleanly or by
// a reset, is a connection error H3_CLOSED_CRITICAL_STREAM (RFC 9114
// section 6.2.1); the end of the connection itself is not.
func (c *conn) criticalStreamError(err error) error {
	if _, ok := asH3(err); ok {
		return err
	}
	var se *quic.StreamError
	if err == io.EOF || errors.Is(err, errTruncated) || (errors.As(err, &se) && !c.closed()) {
		return connError(ErrCodeClosedCriticalStream, "critical stream closed")
	}
	return err
}

// readControlStream reads the peer's control stream: SETTINGS first,
// then GOAWAY, MAX_PUSH_ID and unknown frames.
func (c *conn) readControlStream(r *bufio.Reader) error {
	first := true
	for {
		f, err := readControlFrame(r, first)
		if err != nil {
			return err
		}
		if first {
			first = false
			if f.settings.h3Datagram && c.wantDatagrams && !c.quicDatagrams() {
				// RFC 9297 section 2.1.1: HTTP datagrams need QUIC
				// DATAGRAM frames. An endpoint that does not use HTTP
				// datagrams ignores the setting, as quic-go does, so
				// that it works with peers that offer them.
				return connError(ErrCodeSettingsError, "SETTINGS_H3_DATAGRAM without QUIC DATAGRAM frames")
			}
			c.mu.Lock()
			c.peer, c.gotSettings = f.settings, true
			c.mu.Unlock()
			close(c.settingsReady)
			continue
		}
		switch f.typ {
		case frameSettings:
			return connError(ErrCodeFrameUnexpected, "second SETTINGS frame")
		case frameGoAway:
			if err := c.handleGoAway(f.id); err != nil {
				return err
			}
		case frameCancelPush:
			// A server never promised a push, and a client never
			// allowed one: the ID is unknown either way (RFC 9114
			// section 7.2.3).
			return connError(ErrCodeIDError, "CANCEL_PUSH for push %d, which was never allowed", f.id)
		case frameMaxPushID:
			if !c.isServer {
				return connError(ErrCodeFrameUnexpected, "MAX_PUSH_ID from a server")
			}
			c.mu.Lock()
			smaller := c.gotMaxPushID && f.id < c.maxPushID
			c.maxPushID, c.gotMaxPushID = f.id, true
			c.mu.Unlock()
			if smaller {
				// RFC 9114 section 7.2.7.
				return connError(ErrCodeIDError, "MAX_PUSH_ID decreased")
			}
		}
	}
}

// handleGoAway checks a GOAWAY (RFC 9114 section 5.2): a server's carries
// a client-initiated bidirectional stream ID, and neither side's may
// grow.
func (c *conn) handleGoAway(id uint64) error {
	if !c.isServer && id%4 != 0 {
		return connError(ErrCodeIDError, "GOAWAY with stream ID %d, not a request stream", id)
	}
	c.mu.Lock()
	grew := c.gotGoAway && id > c.peerGoAway
	if !grew {
		c.peerGoAway, c.gotGoAway = id, true
	}
	c.mu.Unlock()
	if grew {
		return connError(ErrCodeIDError, "GOAWAY ID grew to %d", id)
	}
	if c.onGoAway != nil {
		c.onGoAway(id)
	}
	return nil
}

// readEncoderStream reads the peer's QPACK encoder stream. This
// endpoint's dynamic table capacity is zero, so the only instruction
// allowed is Set Dynamic Table Capacity with 0 (RFC 9204 section 4.3).
func (c *conn) readEncoderStream(r *bufio.Reader) error {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return err
		}
		if b&0xe0 != 0x20 {
			return connError(ErrCodeQPACKEncoderStreamError, "encoder instruction %#x with no dynamic table", b)
		}
		capacity, err := readPrefixInt(r, b, 5, ErrCodeQPACKEncoderStreamError)
		if err != nil {
			return err
		}
		if capacity > c.local.qpackMaxTableCapacity {
			// RFC 9204 section 4.3.1.
			return connError(ErrCodeQPACKEncoderStreamError, "dynamic table capacity %d above the maximum", capacity)
		}
	}
}

// readDecoderStream reads the peer's QPACK decoder stream. This
// endpoint's encoder never references the dynamic table, so Section
// Acknowledgment and Insert Count Increment are errors (RFC 9204
// sections 4.4.1 and 4.4.3); Stream Cancellation is ignored.
func (c *conn) readDecoderStream(r *bufio.Reader) error {
	for {
		b, err := r.ReadByte()
		if err != nil {
			return err
		}
		switch {
		case b&0x80 != 0:
			return connError(ErrCodeQPACKDecoderStreamError, "Section Acknowledgment for a section without dynamic references")
		case b&0xc0 == 0x40:
			if _, err := readPrefixInt(r, b, 6, ErrCodeQPACKDecoderStreamError); err != nil {
				return err
			}
		default:
			return connError(ErrCodeQPACKDecoderStreamError, "Insert Count Increment with no insertions")
		}
	}
}

// readPrefixInt reads the rest of an HPACK/QPACK prefixed integer whose
// first byte is b (RFC 7541 section 5.1). A value beyond 62 bits is an
// error with code; callers check the value anyway.
func readPrefixInt(r io.ByteReader, b byte, n uint, code ErrCode) (uint64, error) {
	mask := byte(1)<<n - 1
	v := uint64(b & mask)
	if v < uint64(mask) {
		return v, nil
	}
	for shift := uint(0); ; shift += 7 {
		if shift > 56 {
			return 0, connError(code, "prefixed integer too large")
		}
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = errTruncated
			}
			return 0, err
		}
		v += uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}
