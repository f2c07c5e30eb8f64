package http3

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/quic"
)

// NextProtoH3 is the ALPN protocol of HTTP/3 (RFC 9114 section 3.1).
const NextProtoH3 = "h3"

// Server serves HTTP/3 requests with an http.Handler.
type Server struct {
	// Handler answers requests; nil means http.DefaultServeMux.
	Handler http.Handler
	// TLSConfig is the TLS configuration of ListenAndServe, which adds
	// the ALPN protocol "h3". A Listener given to Serve must have been
	// made with "h3" among its NextProtos.
	TLSConfig *tls.Config
	// QUICConfig configures the QUIC connections of ListenAndServe: its
	// MaxIncomingStreams is how many requests a client may have under way
	// on one connection (default 100).
	QUICConfig *quic.Config
	// MaxHeaderBytes bounds the size of a request's field section as RFC
	// 9114 section 4.2.2 counts it, announced to clients in
	// SETTINGS_MAX_FIELD_SECTION_SIZE; a larger request gets a 431
	// response. Zero means http.DefaultMaxHeaderBytes (1 MiB). Its QPACK
	// encoding, which the server buffers whole, may be twice as large.
	MaxHeaderBytes int
	// ReadHeaderTimeout is how long a request stream has, from its
	// arrival, to deliver its whole HEADERS frame; one that has not is
	// reset with H3_REQUEST_INCOMPLETE (RFC 9114 section 4.1.1) and its
	// buffers are freed. Zero means DefaultReadHeaderTimeout (10 s),
	// negative no limit.
	ReadHeaderTimeout time.Duration
	// IdleStreamTimeout is how long the server waits for a byte of a
	// request: a read of its header, or of its body by the handler,
	// that gets none for that long resets the stream with
	// H3_REQUEST_INCOMPLETE and ends the request's context. Zero means
	// DefaultIdleStreamTimeout (60 s), negative no limit. A handler's
	// own deadlines (http.ResponseController) apply as well.
	IdleStreamTimeout time.Duration
	// ResponseStallTimeout is how long a response write may wait for
	// the client's flow control to take a byte: after that the client
	// is taken to have stopped reading, the response is reset with
	// H3_REQUEST_CANCELLED and the request's context ends, so that the
	// handler returns and frees what it holds. Zero means
	// DefaultResponseStallTimeout (5 min), negative no limit.
	ResponseStallTimeout time.Duration
	// MaxConnHeaderBytes bounds the header data that one connection's
	// request streams buffer together while their headers arrive: a
	// 4 KiB read buffer each, and HEADERS payloads larger than that as
	// they are received. A new stream that does not fit is refused and
	// a header that outgrows it is reset, both with
	// H3_REQUEST_REJECTED (RFC 9114 section 4.1.1: the client may
	// retry). Zero means four times MaxHeaderBytes, at least 1 MiB;
	// negative no bound.
	MaxConnHeaderBytes int
	// MaxRequestMemory is the budget of what the whole Server's request
	// streams hold: headers as MaxConnHeaderBytes counts them, 8 KiB
	// more for each stream whose header is awaited (its goroutine and
	// QUIC state), and each request body's 4 KiB read buffer until the
	// handler read the body or returned (a body is not buffered beyond
	// that: the QUIC stream's flow control holds the client back). When
	// it is spent, the incomplete headers that waited longest are reset
	// with H3_REQUEST_REJECTED to make room, and new streams are refused
	// when that is not enough. Zero means DefaultMaxRequestMemory (64
	// MiB), negative no limit. Stats counts what was refused.
	MaxRequestMemory int64
	// EnableExtendedConnect advertises SETTINGS_ENABLE_CONNECT_PROTOCOL
	// (RFC 9220 section 3), which lets clients send extended CONNECT
	// requests: a CONNECT with a :protocol, such as CONNECT-IP's
	// "connect-ip" (connect_server.go). Without it such a request is
	// malformed (H3_MESSAGE_ERROR).
	EnableExtendedConnect bool
	// EnableDatagrams advertises SETTINGS_H3_DATAGRAM (RFC 9297 section
	// 2.1.1) on the connections whose QUIC layer negotiated DATAGRAM
	// frames (RFC 9221), so that extended CONNECT streams carry HTTP
	// datagrams (Stream.SendDatagram, Stream.ReceiveDatagram).
	// It offers the QUIC DATAGRAM frames too, whatever QUICConfig says.
	EnableDatagrams bool
	// ConnContext, if set, derives the base context of a connection's
	// requests.
	ConnContext func(ctx context.Context, c *quic.Conn) context.Context
	// ErrorLog receives handler panics and misuses; nil means the log
	// package's standard logger.
	ErrorLog *log.Logger

	// datagramSource, if set, carries HTTP datagrams instead of the
	// QUIC connections' DATAGRAM frames.
	datagramSource datagramSource

	mu        sync.Mutex
	listeners map[*quic.Listener]*ownedListener
	conns     map[*serverConn]struct{}
	closing   bool // Close or Shutdown began
	draining  bool // Shutdown began
	done      chan struct{}
	wg        sync.WaitGroup // Serve loops and connections
	workers   *workerPool    // the goroutines of request handlers
	writes    *watchList     // response writes under way, nil without ResponseStallTimeout
	handlers  *watchList     // handlers running, polled for STOP_SENDING
	mem       *requestMemory // MaxRequestMemory's budget
	counters  serverCounters
}

// ownedListener is a Listener the Server made itself, with what it must
// close after it.
type ownedListener struct {
	t  *quic.Transport
	pc net.PacketConn
}

// ErrServerClosed is what Serve and ListenAndServe return after Close
// or Shutdown.
var ErrServerClosed = http.ErrServerClosed

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

func (s *Server) initLocked() {
	if s.done == nil {
		s.done = make(chan struct{})
		s.listeners = make(map[*quic.Listener]*ownedListener)
		s.conns = make(map[*serverConn]struct{})
		s.workers = newWorkerPool()
		s.mem = newRequestMemory(s.maxRequestMemory(), s.readHeaderTimeout(), &s.counters)
		if d := s.responseStallTimeout(); d > 0 {
			s.writes = newWatchList(d/8, func(it *watchItem) { it.g.interruptWrite() })
		}
		s.handlers = newWatchList(stopSendingPoll, func(it *watchItem) { it.g.pollStopSending() })
	}
}

// ConfigureTLS returns a copy of conf whose NextProtos offer "h3".
func ConfigureTLS(conf *tls.Config) *tls.Config {
	if conf == nil {
		conf = &tls.Config{}
	}
	conf = conf.Clone()
	if !slices.Contains(conf.NextProtos, NextProtoH3) {
		conf.NextProtos = append([]string{NextProtoH3}, conf.NextProtos...)
	}
	return conf
}

// ListenAndServe listens on the UDP address addr ("host:port") and serves
// requests until Close or Shutdown, after which it returns
// ErrServerClosed.
func (s *Server) ListenAndServe(addr string) error {
	if s.TLSConfig == nil {
		return errors.New("http3: Server.TLSConfig is nil")
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	l, err := s.Listen(pc)
	if err != nil {
		_ = pc.Close()
		return err
	}
	return s.Serve(l)
}

// quicConfig is QUICConfig, with QUIC DATAGRAM frames offered when
// EnableDatagrams asks for HTTP datagrams (RFC 9297 section 2.1.1).
func (s *Server) quicConfig() *quic.Config {
	if !s.EnableDatagrams || (s.QUICConfig != nil && s.QUICConfig.EnableDatagrams) {
		return s.QUICConfig
	}
	var c quic.Config
	if s.QUICConfig != nil {
		c = *s.QUICConfig
	}
	c.EnableDatagrams = true
	return &c
}

// Listen makes a Listener on pc for Serve, owned by the Server: Shutdown
// closes it at once (its connections go on until they are done) and
// Close or Shutdown close pc after it. When QUICConfig allows 0-RTT, the
// Listener is an early one (quic.Transport.ListenEarly), so that requests
// that come in 0-RTT are answered in 0.5-RTT.
func (s *Server) Listen(pc net.PacketConn) (*quic.Listener, error) {
	if s.TLSConfig == nil {
		return nil, errors.New("http3: Server.TLSConfig is nil")
	}
	t := &quic.Transport{Conn: pc}
	listen := t.Listen
	if s.QUICConfig != nil && s.QUICConfig.Allow0RTT {
		listen = t.ListenEarly
	}
	l, err := listen(ConfigureTLS(s.TLSConfig), s.quicConfig())
	if err != nil {
		_ = t.Close()
		return nil, err
	}
	s.mu.Lock()
	s.initLocked()
	if s.closing {
		s.mu.Unlock()
		_ = l.Close()
		_ = t.Close()
		return nil, ErrServerClosed
	}
	s.listeners[l] = &ownedListener{t: t, pc: pc}
	s.mu.Unlock()
	return l, nil
}

// Serve accepts connections on l and serves their requests until Close
// or Shutdown, after which it returns ErrServerClosed, or until l fails.
// Close and Shutdown close l. On an early Listener (quic.ListenEarly),
// requests that came in 0-RTT are served before the handshake completes,
// those with a safe method at once and the others once it completed.
func (s *Server) Serve(l *quic.Listener) error {
	s.mu.Lock()
	s.initLocked()
	if s.closing {
		s.mu.Unlock()
		return ErrServerClosed
	}
	if _, ok := s.listeners[l]; !ok {
		s.listeners[l] = nil
	}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	for {
		qc, err := l.Accept(ctx)
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			return err
		}
		s.ServeConn(qc)
	}
}

// ServeConn serves the requests of one connection, in goroutines of its
// own, until the connection ends; the Server's Close closes it.
func (s *Server) ServeConn(qc *quic.Conn) {
	s.mu.Lock()
	s.initLocked()
	if s.closing && !s.draining {
		s.mu.Unlock()
		_ = qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "server closed")
		return
	}
	sc := &serverConn{s: s, maxAccepted: -1, mem: &connMemory{limit: s.maxConnHeaderBytes()}}
	sc.conn = newConn(qc, true, settings{
		maxFieldSectionSize: s.maxHeaderBytes(), hasMaxFieldSectionSize: true,
		enableConnectProtocol: s.EnableExtendedConnect,
	})
	if s.EnableDatagrams {
		sc.enableDatagrams(s.datagramSource, &s.counters.datagrams)
	}
	s.conns[sc] = struct{}{}
	draining := s.draining
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		sc.serve(draining)
		s.mu.Lock()
		delete(s.conns, sc)
		s.mu.Unlock()
	}()
}

// Close closes the listeners and every connection at once; requests
// under way fail. Serve returns ErrServerClosed.
func (s *Server) Close() error {
	s.mu.Lock()
	s.initLocked()
	if !s.closing {
		s.closing = true
		close(s.done)
		s.workers.close()
	}
	s.draining = false
	ls := s.listeners
	s.listeners = map[*quic.Listener]*ownedListener{}
	conns := make([]*serverConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for _, sc := range conns {
		_ = sc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "server closed")
	}
	closeListeners(ls)
	s.wg.Wait()
	s.mem.stopHeaderTimer()
	if s.writes != nil {
		s.writes.stop()
	}
	s.handlers.stop()
	return nil
}

func closeListeners(ls map[*quic.Listener]*ownedListener) {
	for l, o := range ls {
		_ = l.Close()
		if o != nil {
			_ = o.t.Close()
			_ = o.pc.Close()
		}
	}
}

// Shutdown stops the server gracefully: it stops accepting connections,
// sends every connection a GOAWAY (RFC 9114 section 5.2) that lets the
// requests under way finish and refuses later ones, and closes each
// connection once its responses are delivered. If ctx ends first, it
// closes what is left as Close does and returns ctx's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.initLocked()
	if !s.closing {
		s.closing = true
		s.draining = true
		close(s.done)
		s.workers.close()
	}
	// Owned listeners close now: their connections live on. A
	// Listener from elsewhere may close its connections with it, so it
	// waits for them.
	owned := map[*quic.Listener]*ownedListener{}
	for l, o := range s.listeners {
		if o != nil {
			owned[l] = o
			delete(s.listeners, l)
		}
	}
	conns := make([]*serverConn, 0, len(s.conns))
	for sc := range s.conns {
		conns = append(conns, sc)
	}
	s.mu.Unlock()
	for l := range owned {
		_ = l.Close()
	}
	for _, sc := range conns {
		sc.goAway()
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			_ = s.Close()
			closeListeners(owned)
			return ctx.Err()
		}
	}
	err := s.Close()
	closeListeners(owned)
	return err
}

// peerFieldLimit returns the client's SETTINGS_MAX_FIELD_SECTION_SIZE,
// or 0.
func (s *Server) peerFieldLimit(w *responseWriter) uint64 {
	if w.sc == nil {
		return 0
	}
	p, ok := w.sc.peerSettings()
	if !ok || !p.hasMaxFieldSectionSize {
		return 0
	}
	return p.maxFieldSectionSize
}

// serverConn is the server's side of one connection.
type serverConn struct {
	*conn
	s *Server

	mu          sync.Mutex
	active      int   // requests whose handlers run
	maxAccepted int64 // the largest request stream ID accepted, or -1
	goAwayID    uint64
	sentGoAway  bool
	draining    bool // closeDrained runs

	mem *connMemory // MaxConnHeaderBytes's bound

	// remote is the client's address and its text, for the requests'
	// RemoteAddr.
	remote atomic.Pointer[remoteText]
	// base is the context the requests derive from (requestBase), and
	// requests the admitted ones (request_context.go).
	base     atomic.Pointer[baseContext]
	requests *requestStream
}

// remoteText is an address with its text.
type remoteText struct {
	addr netip.AddrPort
	text string
}

// remoteAddr is the client's address as text. It is formatted again only
// when the address changed (a NAT rebinding or the client's migration):
// formatting it for every request cost a server a fiftieth of its time,
// and taking it as a net.Addr two allocations per request.
func (sc *serverConn) remoteAddr() string {
	ap := sc.qc.RemoteAddrPort()
	if r := sc.remote.Load(); r != nil && r.addr == ap {
		return r.text
	}
	r := &remoteText{addr: ap, text: net.UDPAddrFromAddrPort(ap).String()}
	sc.remote.Store(r)
	return r.text
}

func (sc *serverConn) serve(draining bool) {
	defer sc.wg.Wait()
	if err := sc.start(); err != nil {
		_ = sc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeInternalError), "")
		return
	}
	if draining {
		sc.goAway()
	}
	// The requests' contexts end with the connection
	// (request_context.go).
	context.AfterFunc(sc.qc.Context(), sc.cancelRequests)
	for {
		st, err := sc.qc.AcceptStream(context.Background())
		if err != nil {
			return
		}
		rs := &requestStream{sc: sc}
		g := &rs.g
		sc.s.initStreamGuard(g, st)
		mem, ok := sc.admit(st, rs)
		if !ok {
			// RFC 9114 sections 4.1.1 and 5.2: the request was not
			// processed; the client may retry it, here or elsewhere.
			st.CancelRead(quic.StreamErrorCode(ErrCodeRequestRejected))
			st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestRejected))
			continue
		}
		// Handlers are not waited for: one that ignores its context
		// must not hold up Close.
		rs.mem = mem
		sc.s.workers.run(rs)
	}
}

// requestStream is the server's state of one request stream, allocated
// at once when the stream arrives: its guard and memory charge, the
// request's fields and http.Request, and the response writer and request
// body of its handler. Apart, they and the closure that ran the stream
// were eight allocations per request.
type requestStream struct {
	sc     *serverConn
	mem    *streamCharge // &charge once admitted
	charge streamCharge
	g      streamGuard
	w      responseWriter
	b      body
	rb     requestBody
	fields requestFields
	req    http.Request

	// The connection's list of its admitted requests, guarded by its
	// lock; cancel ends the request's context, once ctxMade says it is
	// set (request_context.go).
	prev, next *requestStream
	cancel     context.CancelCauseFunc
	ctxMade    atomic.Bool
}

// run serves the stream on a goroutine of the Server's pool.
func (rs *requestStream) run() {
	sc := rs.sc
	if tunnel := sc.handleStream(rs, rs.mem); tunnel != nil {
		// An extended CONNECT's stream outlives its handler: the
		// request is done when the stream is.
		context.AfterFunc(tunnel, func() { sc.requestDone(rs) })
		return
	}
	sc.requestDone(rs)
}

// requestDone counts a request out; after GOAWAY, the last one closes
// the connection.
func (sc *serverConn) requestDone(rs *requestStream) {
	sc.mu.Lock()
	sc.unlistLocked(rs)
	sc.active--
	drained := sc.sentGoAway && sc.active == 0
	sc.mu.Unlock()
	if drained {
		sc.closeDrained()
	}
}

// admit decides whether a new request stream is served: not if a GOAWAY
// excluded it, nor if its read buffer does not fit in the connection's
// header bound or the server's memory budget. An admitted stream counts
// as active, with its memory charge, and its header timeout runs.
func (sc *serverConn) admit(st *quic.Stream, rs *requestStream) (*streamCharge, bool) {
	id := int64(st.StreamID())
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.sentGoAway && uint64(id) >= sc.goAwayID {
		return nil, false
	}
	sc.maxAccepted = max(sc.maxAccepted, id)
	mem, ok := sc.s.mem.openIn(&rs.charge, sc.mem, st, &rs.g)
	if ok {
		sc.active++
		sc.listLocked(rs)
	}
	return mem, ok
}

// goAway sends a GOAWAY with the first request stream not accepted, after
// which later requests are refused, and closes the connection once the
// accepted ones are done.
func (sc *serverConn) goAway() {
	sc.mu.Lock()
	if sc.sentGoAway {
		sc.mu.Unlock()
		return
	}
	sc.sentGoAway = true
	sc.goAwayID = uint64(sc.maxAccepted + 4)
	id := sc.goAwayID
	idle := sc.active == 0
	sc.mu.Unlock()
	if err := sc.sendGoAway(id); err != nil {
		_ = sc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
		return
	}
	if idle {
		sc.closeDrained()
	}
}

// closeDrained closes a connection whose requests are done after GOAWAY:
// when the client closes it, or once the client acknowledged every byte
// the streams wrote and nothing was in flight for two round trips. Nothing
// in flight alone is not enough: a client that stops reading for a while
// leaves the rest of a response queued behind its flow control, with no
// packet in flight.
//
// The goroutine is not in sc.wg, which serve may be waiting on already:
// it ends when the connection does.
func (sc *serverConn) closeDrained() {
	sc.mu.Lock()
	started := sc.draining
	sc.draining = true
	sc.mu.Unlock()
	if started {
		return
	}
	go func() {
		quiet := time.Duration(0)
		last := time.Now()
		for !sc.closed() {
			st := sc.qc.Stats()
			now := time.Now()
			if st.BytesInFlight == 0 && st.StreamBytesUnacked == 0 {
				quiet += now.Sub(last)
			} else {
				quiet = 0
			}
			last = now
			if quiet >= max(2*st.SmoothedRTT, 20*time.Millisecond) {
				_ = sc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
				return
			}
			select {
			case <-sc.qc.Context().Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
}

// handleStream reads a request and runs the handler. The stream's
// memory charge is freed when it returns, if not before, or, for an
// extended CONNECT whose stream the handler took, when the stream ends,
// whose context it then returns.
func (sc *serverConn) handleStream(rs *requestStream, mem *streamCharge) (tunnel context.Context) {
	g := &rs.g
	r := getStreamReader(g)
	limit := sc.s.maxHeaderBytes()
	var cancel context.CancelCauseFunc
	protocol, err := sc.readRequest(rs, r, limit, mem, func() context.Context {
		var ctx context.Context
		ctx, cancel = sc.requestContext(rs)
		return ctx
	})
	g.headerRead()
	mem.headerDone()
	if err != nil {
		putStreamReader(r)
		mem.release()
		sc.rejectRequest(g, err)
		return nil
	}
	tunnel = sc.runHandler(rs, r, &rs.req, cancel, protocol, limit, mem)
	if tunnel != nil {
		context.AfterFunc(tunnel, mem.release)
	} else {
		mem.release()
	}
	return tunnel
}

// readRequest reads the HEADERS frame that opens request stream rs into
// rs.req, with the context newContext makes once the request is known
// to be well formed, and returns its :protocol, if any. A payload that
// cannot be charged to mem rejects the request: the server did not
// process it (RFC 9114 section 4.1.1).
func (sc *serverConn) readRequest(rs *requestStream, r *bufio.Reader, limit uint64, mem *streamCharge, newContext func() context.Context) (string, error) {
	rf := &rs.fields
	if err := sc.readRequestFields(r, limit, mem, rf); err != nil {
		return "", err
	}
	if rf.protocol != "" && !sc.local.enableConnectProtocol {
		// RFC 9220 section 3 (RFC 8441 section 4): a :protocol the
		// server did not allow makes the request malformed.
		return "", streamError(ErrCodeMessageError, ":protocol %q without SETTINGS_ENABLE_CONNECT_PROTOCOL", rf.protocol)
	}
	if rf.protocol != "" && !validToken(rf.protocol) {
		// RFC 8441 section 4: an upgrade token (RFC 9110 section 16.7).
		return "", streamError(ErrCodeMessageError, "invalid :protocol %q", rf.protocol)
	}
	return rf.protocol, newServerRequest(&rs.req, rf, newContext)
}

// readRequestFields reads and checks a request's field section into rf.
func (sc *serverConn) readRequestFields(r *bufio.Reader, limit uint64, mem *streamCharge, rf *requestFields) error {
	// The QPACK encoding of a field may be longer than the field (its
	// Huffman code): the frame may be twice the limit.
	f, err := readRequestFrameIn(r, 2*limit, mem)
	switch {
	case errors.Is(err, errNoMemory):
		return streamError(ErrCodeRequestRejected, "request memory spent")
	case err == io.EOF:
		return streamError(ErrCodeRequestIncomplete, "request stream ended before HEADERS")
	case err != nil:
		return fromQUIC(err)
	case f.typ == frameData:
		// RFC 9114 section 4.1: DATA before HEADERS is an invalid
		// sequence of frames.
		return connError(ErrCodeFrameUnexpected, "DATA before HEADERS")
	case f.typ == framePushPromise:
		return connError(ErrCodeFrameUnexpected, "PUSH_PROMISE from a client")
	}
	// Decoded into room on the stack: a request's fields are few.
	var room [maxFieldsOnStack]headerField
	fields, err := appendFieldSection(room[:0], f.payload, limit)
	if err != nil {
		return err
	}
	return parseRequestFields(fields, rf)
}

// rejectRequest answers a request that could not be read: a 431 for a
// field section above the limit, a stream or connection error otherwise.
func (sc *serverConn) rejectRequest(g *streamGuard, err error) {
	st := g.st
	if errors.Is(err, errFieldSectionTooLarge) {
		fw := getFieldWriter()
		fw.field(":status", "431")
		fw.field("content-length", "0")
		_, _ = g.Write(fw.frame(nil))
		putFieldWriter(fw)
		_ = st.Close()
		// RFC 9114 section 4.1: a complete response was sent; the rest
		// of the request is not needed.
		st.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
		return
	}
	e, ok := asH3(err)
	if !ok || e.Remote {
		// The stream or connection ended (the quic package's errors).
		st.CancelRead(quic.StreamErrorCode(ErrCodeRequestIncomplete))
		st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestIncomplete))
		return
	}
	if e.Connection {
		sc.fail(e)
		return
	}
	st.CancelRead(quic.StreamErrorCode(e.Code))
	st.CancelWrite(quic.StreamErrorCode(e.Code))
}

// runHandler runs the handler for req, whose context cancel ends, and
// completes the response. For an extended CONNECT (protocol set) whose
// handler took the stream, it returns the stream's context and leaves
// the stream to its owner.
func (sc *serverConn) runHandler(rs *requestStream, r *bufio.Reader, req *http.Request, cancel context.CancelCauseFunc, protocol string, limit uint64, mem *streamCharge) (tunnel context.Context) {
	g := &rs.g
	st := g.st
	ctx := req.Context()
	defer cancel(nil)
	req.RemoteAddr = sc.remoteAddr()
	if !safeMethod(req.Method) && !waitHandshake(ctx, sc.qc) {
		// A request that came in 0-RTT and is not safe to replay runs
		// only once the handshake proved it no replay (RFC 8470
		// section 3); this connection's never completed.
		st.CancelRead(quic.StreamErrorCode(ErrCodeRequestRejected))
		st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestRejected))
		return nil
	}
	req.TLS = sc.tls()

	g.setOnReset(cancel)
	w := &rs.w
	initResponseWriter(w, sc.s, g, req)
	w.sc = sc.conn
	b := &rs.b
	*b = body{
		c:             sc.conn,
		st:            st,
		r:             r,
		contentLength: req.ContentLength,
		maxTrailers:   limit,
		trailer:       &req.Trailer,
		pooled:        true,
		mem:           mem,
	}
	if protocol != "" {
		w.connect = sc.prepareConnect(g, b)
		sc.awaitPeerSettings(ctx)
	}
	if req.Header.Get("Expect") == "100-continue" {
		b.beforeRead = w.send100Continue
	}
	rs.rb = requestBody{b: b}
	req.Body = &rs.rb

	handler := sc.s.Handler
	if handler == nil {
		handler = http.DefaultServeMux
	}
	// The first look for STOP_SENDING is a poll after the request's
	// arrival, the clock read then: a handler starts microseconds after.
	g.handlers.joinAt(&g.handlerItem, mem.arrival)
	ok := sc.callHandler(handler, w, req)
	g.handlers.leave(&g.handlerItem, true)
	if s := w.takenStream(); s != nil {
		if !ok {
			s.CancelWrite(ErrCodeInternalError)
			s.CancelRead(ErrCodeInternalError)
		}
		return s.Context()
	}
	w.connect.end(sc.conn, st.StreamID())
	if !ok {
		b.stopUnread()
		w.abort()
		st.CancelRead(quic.StreamErrorCode(ErrCodeInternalError))
		return nil
	}
	w.finish()
	// The request body may not have been read to its end: ask the client
	// to stop sending (RFC 9114 section 4.1).
	if !b.stopUnread() {
		st.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
	}
	return nil
}

// stopSendingPoll is how often a running handler's stream is checked
// for the client's STOP_SENDING.
const stopSendingPoll = 50 * time.Millisecond

// pollStopSending cancels a request's context when the client stopped
// reading the response (STOP_SENDING, which a canceled request sends), as
// net/http does when a client goes away. The quic package reports
// STOP_SENDING only to writes, so the stream of a handler that runs
// longer than stopSendingPoll is polled with an empty write, which sends
// nothing, every stopSendingPoll: the Server's list of running handlers
// (watch.go) calls this.
func (g *streamGuard) pollStopSending() {
	_, err := g.st.Write(nil)
	// A *quic.StreamError, or an unknown stream once the quic package
	// forgot a stream that both sides ended.
	if err != nil && !isDeadline(err) {
		g.mu.Lock()
		f := g.onReset
		g.mu.Unlock()
		if f != nil {
			f(nil)
		}
		return
	}
	g.handlers.join(&g.handlerItem)
}

// callHandler runs the handler; it reports false after a panic, which it
// logs unless it is http.ErrAbortHandler.
func (sc *serverConn) callHandler(h http.Handler, w *responseWriter, req *http.Request) (ok bool) {
	defer func() {
		if p := recover(); p != nil {
			ok = false
			if p != http.ErrAbortHandler {
				buf := make([]byte, 16<<10)
				buf = buf[:runtime.Stack(buf, false)]
				sc.s.logf("http3: panic serving %v: %v\n%s", sc.qc.RemoteAddr(), p, buf)
			}
		}
	}()
	h.ServeHTTP(w, req)
	return true
}

// requestBody is a request's Body for the handler.
type requestBody struct{ b *body }

func (rb *requestBody) Read(p []byte) (int, error) { return rb.b.Read(p) }

// Close stops reading the request; the client is asked to stop sending
// if it has not finished.
func (rb *requestBody) Close() error {
	return rb.b.close(func(complete bool) {
		if !complete {
			rb.b.st.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
		}
	})
}

func (sc *serverConn) String() string { return fmt.Sprintf("http3 conn %v", sc.qc.RemoteAddr()) }
