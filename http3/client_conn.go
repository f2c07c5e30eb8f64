package http3

import (
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/satquic/satquic/quic"
)

// clientConn is a Transport's connection to one authority.
type clientConn struct {
	*conn
	t   *Transport
	key string

	mu       sync.Mutex
	active   int           // requests reserved or under way
	streams  *clientStream // the requests tracked, linked by trackNext
	watches  watchSet      // the requests' contexts (client_watch.go)
	goAway   bool
	goAwayID uint64
}

// errRefused: the server's GOAWAY excluded the request's stream, which
// it therefore did not process (RFC 9114 section 5.2).
var errRefused = errors.New("http3: request refused by the server's GOAWAY")

// reserve counts a new request in, unless the connection ended or
// received GOAWAY.
func (cc *clientConn) reserve() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.goAway || cc.closed() {
		return false
	}
	cc.active++
	return true
}

// release counts a request out; after GOAWAY, the last one closes the
// connection.
func (cc *clientConn) release() { cc.releaseStream(nil) }

// releaseStream is release for a request whose stream cs was tracked
// (track), forgotten under the same lock.
func (cc *clientConn) releaseStream(cs *clientStream) {
	cc.mu.Lock()
	if cs != nil {
		cc.untrackLocked(cs)
		cc.unwatchLocked(cs)
	}
	cc.active--
	last := cc.goAway && cc.active == 0
	cc.mu.Unlock()
	if last {
		go cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
	}
}

func (cc *clientConn) idle() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.active == 0
}

// goAwayReceived stops new requests on the connection (RFC 9114 section
// 5.2); it closes once the requests below id are done.
func (cc *clientConn) goAwayReceived(id uint64) {
	cc.mu.Lock()
	cc.goAway, cc.goAwayID = true, id
	idle := cc.active == 0
	var refused []*clientStream
	for cs := cc.streams; cs != nil; cs = cs.trackNext {
		if uint64(cs.st.StreamID()) >= id {
			refused = append(refused, cs)
		}
	}
	cc.mu.Unlock()
	// The requests the server will not process fail now, to be sent
	// again elsewhere.
	for _, cs := range refused {
		cs.abort(errRefused)
	}
	cc.t.mu.Lock()
	if cc.t.conns[cc.key] == cc {
		delete(cc.t.conns, cc.key)
	}
	cc.t.mu.Unlock()
	if idle {
		go cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
	}
}

// track records the request on stream cs.st, for a GOAWAY to come, and
// makes the end of ctx cancel it, unless the server's GOAWAY excluded
// the stream already: one lock where refusedByGoAway, the record and the
// watch of the context took three.
func (cc *clientConn) track(cs *clientStream, ctx context.Context) bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.goAway && uint64(cs.st.StreamID()) >= cc.goAwayID {
		return false
	}
	cs.trackPrev, cs.trackNext, cs.tracked = nil, cc.streams, true
	if cc.streams != nil {
		cc.streams.trackPrev = cs
	}
	cc.streams = cs
	if ctx.Done() != nil {
		cc.watchLocked(cs, ctx)
	}
	return true
}

// untrackLocked forgets the request of cs, if track recorded it.
func (cc *clientConn) untrackLocked(cs *clientStream) {
	if !cs.tracked {
		return
	}
	if cs.trackPrev != nil {
		cs.trackPrev.trackNext = cs.trackNext
	} else {
		cc.streams = cs.trackNext
	}
	if cs.trackNext != nil {
		cs.trackNext.trackPrev = cs.trackPrev
	}
	cs.trackPrev, cs.trackNext, cs.tracked = nil, nil, false
}

// refusedByGoAway reports a stream the server's GOAWAY excluded.
func (cc *clientConn) refusedByGoAway(id quic.StreamID) bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.goAway && uint64(id) >= cc.goAwayID
}

// watch runs until the connection ends. A server never opens a
// bidirectional stream (RFC 9114 section 6.1).
func (cc *clientConn) watch() {
	defer cc.wg.Wait()
	defer cc.closeWatches()
	for {
		st, err := cc.qc.AcceptStream(context.Background())
		if err != nil {
			return
		}
		st.CancelRead(quic.StreamErrorCode(ErrCodeStreamCreationError))
		cc.fail(connError(ErrCodeStreamCreationError, "server opened bidirectional stream %d", st.StreamID()))
	}
}

// encodeRequest appends the request's HEADERS frame (RFC 9114 section
// 4.3.1) to dst.
func encodeRequest(dst []byte, req *http.Request, gzip bool) ([]byte, uint64, error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if !validFieldValue(host) || strings.ContainsAny(host, " /") {
		return nil, 0, fmt.Errorf("http3: invalid host %q", host)
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validToken(method) {
		return nil, 0, fmt.Errorf("http3: invalid method %q", method)
	}
	if err := checkRequestHeader(req.Header); err != nil {
		return nil, 0, err
	}
	fw := getFieldWriter()
	defer putFieldWriter(fw)
	fw.field(":method", method)
	if method == http.MethodConnect {
		fw.field(":authority", host)
	} else {
		path := req.URL.RequestURI()
		if !validFieldValue(path) {
			return nil, 0, fmt.Errorf("http3: invalid path %q", path)
		}
		fw.field(":scheme", "https")
		fw.field(":authority", host)
		fw.field(":path", path)
	}
	fw.header(req.Header, func(name string) bool {
		return name == "host" || name == "content-length" || name == "trailer"
	})
	switch {
	case req.ContentLength > 0:
		fw.field("content-length", strconv.FormatInt(req.ContentLength, 10))
	case !hasBody(req) && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch):
		fw.field("content-length", "0")
	}
	if len(req.Trailer) > 0 {
		keys := make([]string, 0, len(req.Trailer))
		for k := range req.Trailer {
			keys = append(keys, http.CanonicalHeaderKey(k))
		}
		fw.field("trailer", strings.Join(keys, ", "))
	}
	if gzip {
		fw.field("accept-encoding", "gzip")
	}
	return fw.frame(dst), fw.size, nil
}

// checkRequestHeader refuses header fields HTTP/3 cannot carry.
func checkRequestHeader(h http.Header) error {
	for k, vs := range h {
		if !validToken(k) {
			return fmt.Errorf("http3: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !validFieldValue(v) {
				return fmt.Errorf("http3: invalid value of header field %q", k)
			}
		}
	}
	return nil
}

func hasBody(req *http.Request) bool { return req.Body != nil && req.Body != http.NoBody }

// clientStream is one request on a clientConn.
type clientStream struct {
	cc  *clientConn
	st  *quic.Stream
	req *http.Request
	// The connection's list of the requests it tracks (track), guarded
	// by its lock.
	trackPrev, trackNext *clientStream
	tracked              bool
	// The watch of the request's context (client_watch.go), and the
	// other requests it watches; stop instead for a context that has
	// an AfterFunc of its own.
	watch                *ctxWatch
	watchPrev, watchNext *clientStream
	stop                 func() bool

	// bodyDone: the request body was sent, or abandoned, or there was
	// none.
	bodyDone atomic.Bool
	// resp is the response, and body and respBody its Body, allocated
	// with the request's state.
	resp     http.Response
	body     body
	respBody responseBody
	// values holds the response header's values when there are few
	// enough (regularValuesIn), one allocation less per request.
	values [responseValuesInline]string

	mu          sync.Mutex
	abortErr    error // why the request was canceled
	released    bool
	reqBodyOnce sync.Once
}

// responseValuesInline is how many regular field values a response
// keeps in its clientStream; most responses carry fewer.
const responseValuesInline = 8

// requestHeaderRoom is the room on the stack for a request's HEADERS
// frame; a larger one grows into the heap.
const requestHeaderRoom = 512

// roundTrip sends req on the connection. Errors that leave the request
// unprocessed by the server come as a *retryableError.
func (cc *clientConn) roundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	addGzip := !cc.t.DisableCompression && req.Header.Get("Accept-Encoding") == "" &&
		req.Header.Get("Range") == "" && req.Method != http.MethodHead
	// The frame is built on the stack: the stream copies what it writes.
	var room [requestHeaderRoom]byte
	hdr, size, err := encodeRequest(room[:0], req, addGzip)
	if err != nil {
		cc.release()
		closeBody(req)
		return nil, err
	}
	if p, ok := cc.peerSettings(); ok && p.hasMaxFieldSectionSize && size > p.maxFieldSectionSize {
		cc.release()
		closeBody(req)
		return nil, fmt.Errorf("http3: request header of %d bytes above the server's limit of %d", size, p.maxFieldSectionSize)
	}
	if !safeMethod(req.Method) && !waitHandshake(ctx, cc.qc) {
		// A request that is not safe to replay is never sent in 0-RTT
		// (RFC 9114 section 10.9); the connection failed first.
		cc.release()
		if ctx.Err() != nil {
			closeBody(req)
			return nil, ctx.Err()
		}
		return nil, &retryableError{fmt.Errorf("http3: connection ended: %w", fromQUIC(context.Cause(cc.qc.Context())))}
	}
	st, err := cc.openStream(ctx)
	if err != nil {
		cc.release()
		if ctx.Err() != nil {
			closeBody(req)
			return nil, ctx.Err()
		}
		return nil, &retryableError{fmt.Errorf("http3: connection ended: %w", fromQUIC(err))}
	}
	cs := &clientStream{cc: cc, st: st, req: req}
	if !cc.track(cs, ctx) {
		st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
		st.CancelRead(quic.StreamErrorCode(ErrCodeRequestCancelled))
		cc.release()
		return nil, &retryableError{errors.New("http3: server sent GOAWAY")}
	}
	if hasBody(req) {
		if _, err := st.Write(hdr); err != nil {
			return nil, cs.fail(err)
		}
		go cs.writeBody()
	} else {
		cs.bodyDone.Store(true)
		// The header and the FIN leave together. The server may have
		// answered and sent STOP_SENDING already (RFC 9114 section
		// 4.1), which fails the close after the header was written:
		// the response stands.
		if n, err := st.WriteClose(hdr); err != nil && n < len(hdr) {
			return nil, cs.fail(err)
		}
	}
	resp, err := cs.readResponse(addGzip)
	if err != nil {
		return nil, cs.fail(err)
	}
	return resp, nil
}

// fail ends a request that failed before its response: the stream is
// canceled and the error translated; a refusal is retryable.
func (cs *clientStream) fail(err error) error {
	err = cs.mapErr(err)
	e, isH3 := asH3(err)
	cs.abort(err)
	if isH3 && !e.Remote && e.Connection {
		cs.cc.fail(e)
	}
	cs.finish()
	if isH3 && e.Remote && e.Code == ErrCodeRequestRejected && !e.Connection {
		// RFC 9114 section 4.1.1: no part of the request was processed.
		return &retryableError{err}
	}
	if cs.cc.refusedByGoAway(cs.st.StreamID()) {
		return &retryableError{err}
	}
	return err
}

// mapErr gives the cancellation's error for errors that the
// cancellation caused, and translates the quic package's errors.
func (cs *clientStream) mapErr(err error) error {
	cs.mu.Lock()
	abortErr := cs.abortErr
	cs.mu.Unlock()
	if abortErr != nil {
		return abortErr
	}
	return fromQUIC(err)
}

// abort cancels both directions of the stream with
// H3_REQUEST_CANCELLED, wakes calls blocked on it, and closes the request
// body.
func (cs *clientStream) abort(err error) {
	cs.mu.Lock()
	if cs.abortErr == nil {
		cs.abortErr = err
	}
	cs.mu.Unlock()
	cs.st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
	cs.st.CancelRead(quic.StreamErrorCode(ErrCodeRequestCancelled))
	// CancelRead and CancelWrite do not wake a Read or Write already
	// waiting; a passed deadline does.
	wakeReader(cs.st)
	_ = cs.st.SetWriteDeadline(aLongTimeAgo)
	cs.closeReqBody()
}

func (cs *clientStream) closeReqBody() {
	cs.reqBodyOnce.Do(func() { closeBody(cs.req) })
}

// finish releases the request's place on the connection, once.
func (cs *clientStream) finish() {
	cs.mu.Lock()
	done := cs.released
	cs.released = true
	cs.mu.Unlock()
	if done {
		return
	}
	cs.cc.releaseStream(cs)
}

// uploadBufferSize is the largest DATA frame of a request body.
const uploadBufferSize = 32 << 10

// writeBody sends the request body in DATA frames, then the trailers and
// the FIN.
func (cs *clientStream) writeBody() {
	defer cs.bodyDone.Store(true)
	defer cs.closeReqBody()
	req := cs.req
	buf := make([]byte, dataHeaderRoom+uploadBufferSize)
	var sent int64
	for {
		n, rerr := req.Body.Read(buf[dataHeaderRoom:])
		if n > 0 {
			sent += int64(n)
			if req.ContentLength > 0 && sent > req.ContentLength {
				rerr = fmt.Errorf("http3: request body longer than ContentLength %d", req.ContentLength)
			} else if err := cs.writeData(buf, n); err != nil {
				return
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			cs.abort(fmt.Errorf("http3: reading request body: %w", rerr))
			return
		}
	}
	if req.ContentLength > 0 && sent != req.ContentLength {
		cs.abort(fmt.Errorf("http3: request body of %d bytes, ContentLength %d", sent, req.ContentLength))
		return
	}
	if len(req.Trailer) > 0 {
		fw := getFieldWriter()
		fw.header(req.Trailer, nil)
		_, err := cs.st.Write(fw.frame(nil))
		putFieldWriter(fw)
		if err != nil {
			return
		}
	}
	_ = cs.st.Close()
}

// writeData sends buf[dataHeaderRoom:dataHeaderRoom+n] as a DATA frame,
// its header written into the room before it.
func (cs *clientStream) writeData(buf []byte, n int) error {
	var hb [dataHeaderRoom]byte
	h := appendFrameHeader(hb[:0], frameData, uint64(n))
	start := dataHeaderRoom - len(h)
	copy(buf[start:], h)
	_, err := cs.st.Write(buf[start : dataHeaderRoom+n])
	// A server that needs no more of the request says so with
	// STOP_SENDING H3_NO_ERROR; its response stands (RFC 9114 section
	// 4.1). Other errors reach the response's reader too.
	return err
}

// maxInterimResponses bounds the 1xx responses before the final one.
const maxInterimResponses = 32

// readFinalHeader reads a response's HEADERS, skipping interim
// responses, and returns its status and header, whose values take their
// room in inline when they fit (parseResponseFieldsIn).
func readFinalHeader(r *bufio.Reader, limit uint64, inline []string) (int, http.Header, error) {
	for interim := 0; ; interim++ {
		f, err := readRequestFrame(r, 2*limit)
		switch {
		case err == io.EOF:
			return 0, nil, streamError(ErrCodeMessageError, "response stream ended before HEADERS")
		case errors.Is(err, errFieldSectionTooLarge):
			return 0, nil, fmt.Errorf("http3: response header of %d bytes above the limit of %d", f.length, limit)
		case err != nil:
			return 0, nil, err
		case f.typ == frameData:
			return 0, nil, connError(ErrCodeFrameUnexpected, "DATA before HEADERS")
		case f.typ == framePushPromise:
			return 0, nil, connError(ErrCodeIDError, "PUSH_PROMISE without MAX_PUSH_ID")
		}
		var room [maxFieldsOnStack]headerField
		fields, err := appendFieldSection(room[:0], f.payload, limit)
		if errors.Is(err, errFieldSectionTooLarge) {
			return 0, nil, fmt.Errorf("http3: response header above the limit of %d bytes", limit)
		}
		if err != nil {
			return 0, nil, err
		}
		// An interim response's header is dropped: the next
		// section may take the same room.
		status, header, err := parseResponseFieldsIn(fields, inline)
		if err != nil {
			return 0, nil, err
		}
		if status >= 200 {
			return status, header, nil
		}
		if status == http.StatusSwitchingProtocols || interim >= maxInterimResponses {
			return 0, nil, streamError(ErrCodeMessageError, "interim response %d", status)
		}
	}
}

// readResponse reads the response's HEADERS, skipping interim responses.
func (cs *clientStream) readResponse(gzipped bool) (*http.Response, error) {
	r := getStreamReader(cs.st)
	limit := cs.cc.t.maxHeaderBytes()
	status, header, err := readFinalHeader(r, limit, cs.values[:])
	if err != nil {
		return nil, err
	}
	cl, err := parseContentLength(header)
	if err != nil {
		return nil, err
	}
	cs.resp = http.Response{
		Status:        statusLine(status),
		StatusCode:    status,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        header,
		ContentLength: cl,
		Request:       cs.req,
		TLS:           cs.cc.tls(),
	}
	resp := &cs.resp
	declareTrailers(header, &resp.Trailer)
	noBody := cs.req.Method == http.MethodHead || !bodyAllowed(status)
	cs.body = body{
		c:             cs.cc.conn,
		st:            cs.st,
		r:             r,
		contentLength: cl,
		maxTrailers:   limit,
		trailer:       &resp.Trailer,
		response:      cs,
		pooled:        true,
	}
	if noBody {
		// The content-length of a HEAD or 304 response describes a
		// body not sent (RFC 9114 section 4.1.2).
		cs.body.contentLength = -1
	}
	cs.respBody = responseBody{cs: cs, b: &cs.body}
	rb := &cs.respBody
	resp.Body = rb
	if gzipped && strings.EqualFold(header.Get("Content-Encoding"), "gzip") {
		header.Del("Content-Encoding")
		header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		resp.Body = &gzipReader{body: rb}
	}
	return resp, nil
}

// responseBody is the Body of a response.
type responseBody struct {
	cs *clientStream
	b  *body
}

func (rb *responseBody) Read(p []byte) (int, error) { return rb.b.Read(p) }

// ended runs when the whole response arrived: a request body still
// being sent is no longer needed.
func (cs *clientStream) ended() {
	if !cs.bodyDone.Load() {
		cs.st.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
		_ = cs.st.SetWriteDeadline(aLongTimeAgo)
		cs.closeReqBody()
	}
	cs.finish()
}

// Close cancels the stream unless the response arrived whole.
func (rb *responseBody) Close() error {
	return rb.b.close(func(complete bool) {
		if !complete {
			rb.cs.abort(errResponseBodyClosed)
		}
		rb.cs.finish()
	})
}

// errResponseBodyClosed: a read after Body.Close.
var errResponseBodyClosed = errors.New("http3: response body closed")

// gzipReader decompresses a response body the Transport asked gzip for.
type gzipReader struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gzipReader) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if g.zr == nil {
		zr, err := gzip.NewReader(g.body)
		if err != nil {
			g.err = err
			return 0, err
		}
		g.zr = zr
	}
	n, err := g.zr.Read(p)
	if err != nil {
		g.err = err
	}
	return n, err
}

func (g *gzipReader) Close() error {
	g.err = errResponseBodyClosed
	return g.body.Close()
}
