package http3

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// errWriteAfterHandler: a write after the handler returned.
var errWriteAfterHandler = errors.New("http3: write after the handler returned")

// writeBufferSize is how much of a response body is gathered before a
// DATA frame goes out, unless the handler flushes first. A body that
// fits and ends with the handler gets a content-length.
const writeBufferSize = 16 << 10

// dataHeaderRoom is the room kept before buffered data for its DATA
// frame header (a 1-byte type and a length of up to 8 bytes).
const dataHeaderRoom = 9

// frameRoom is the room kept before buffered data for the frames that
// precede it: the DATA frame header, and the HEADERS frame if it fits, so
// that a small response leaves in one write.
const frameRoom = 512

var writeBuffers = sync.Pool{New: func() any {
	b := make([]byte, frameRoom, frameRoom+writeBufferSize)
	return &b
}}

// responseWriter is the http.ResponseWriter of one request stream. It
// sends the header when the first body bytes leave, as one HEADERS frame,
// and the body in DATA frames of up to writeBufferSize bytes, or as large
// as the handler's writes beyond that.
type responseWriter struct {
	s  *Server
	sc *conn
	st *quic.Stream
	// g writes to st within the Server's idle timeout and the
	// handler's deadlines.
	g      *streamGuard
	req    *http.Request
	isHead bool

	header http.Header
	// fields is the final header's field section, encoded when
	// WriteHeader snapshots the header, but for the fields added when
	// it is sent (fieldsLater); nil once sent. An extended CONNECT
	// keeps a copy of the header in snap instead, which HTTPStream may
	// change, and encodes it when it is sent.
	fields      *fieldWriter
	later       fieldsLater
	snap        http.Header
	status      int
	wroteHeader bool // the final status is set
	sentHeader  bool // the final HEADERS frame left
	trailers    []string
	declared    int64 // the handler's content-length, or -1
	written     int64
	finished    bool
	// connect is set for an extended CONNECT (connect_server.go).
	connect *connectState

	// mu serializes writes to the stream: the handler's, and the 100
	// Continue that the request body may send from another goroutine.
	mu      sync.Mutex
	bufp    *[]byte // frameRoom bytes, then the buffered data
	err     error   // the first write error
	sent100 bool
}

// initResponseWriter makes *w the writer of req's response.
func initResponseWriter(w *responseWriter, s *Server, g *streamGuard, req *http.Request) {
	*w = responseWriter{
		s:        s,
		st:       g.st,
		g:        g,
		req:      req,
		isHead:   req.Method == http.MethodHead,
		header:   make(http.Header),
		declared: -1,
	}
}

func (w *responseWriter) Header() http.Header { return w.header }

// WriteHeader sets the status. 1xx statuses other than 101 go out at
// once as interim responses (RFC 9114 section 4.1); the final status is
// sent with the first body bytes or the handler's end.
func (w *responseWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("http3: invalid WriteHeader code %v", code))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished {
		return
	}
	if w.wroteHeader {
		w.s.logf("http3: superfluous WriteHeader(%d) for %s", code, w.req.URL.Path)
		return
	}
	if code < 200 && code != http.StatusSwitchingProtocols {
		w.sendInterimLocked(code, w.header)
		return
	}
	w.status = code
	w.wroteHeader = true
	h := w.header
	badLength := false
	if cl := h.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			w.declared = n
		} else {
			badLength = true
		}
	}
	for _, v := range h["Trailer"] {
		for _, k := range strings.Split(v, ",") {
			if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k != "" {
				w.trailers = append(w.trailers, k)
			}
		}
	}
	if w.connect != nil {
		w.snap = h.Clone()
		if badLength {
			w.snap.Del("Content-Length")
		}
		return
	}
	// The header as it is now is what goes out: encoding it here spares
	// the copy that would keep it from the handler's later changes.
	w.fields = w.encodeFieldsLocked(h, badLength)
}

// fieldsLater are the fields of a final header that are only known when
// it is sent: what the header did not set then.
type fieldsLater struct {
	// sniff: the header set no Content-Type nor Content-Encoding, so
	// the first body bytes decide the Content-Type.
	sniff bool
	// date: the header set no Date.
	date bool
	// length: the body's length becomes the content-length (finish).
	length bool
}

// encodeFieldsLocked starts the final header's field section: its
// status and the fields of h, leaving out the trailers announced with
// http.TrailerPrefix and an invalid Content-Length. What h leaves to
// the server is noted in w.later.
func (w *responseWriter) encodeFieldsLocked(h http.Header, badLength bool) *fieldWriter {
	_, typeSet := h["Content-Type"]
	_, dateSet := h["Date"]
	w.later.sniff = bodyAllowed(w.status) && !typeSet && h.Get("Content-Encoding") == ""
	w.later.date = !dateSet
	fw := getFieldWriter()
	fw.field(":status", statusValue(w.status))
	fw.header(h, func(name string) bool {
		return isTrailerAnnouncement(name) || (badLength && name == "content-length")
	})
	return fw
}

// statusValue is the :status value of code; the frequent ones are
// written without allocating.
func statusValue(code int) string {
	switch code {
	case http.StatusOK:
		return "200"
	case http.StatusNoContent:
		return "204"
	case http.StatusNotModified:
		return "304"
	case http.StatusNotFound:
		return "404"
	}
	return strconv.Itoa(code)
}

// sendInterimLocked sends a 1xx response.
func (w *responseWriter) sendInterimLocked(code int, h http.Header) {
	if w.err != nil {
		return
	}
	fw := getFieldWriter()
	fw.field(":status", strconv.Itoa(code))
	fw.header(h, nil)
	_, w.err = w.g.Write(fw.frame(nil))
	putFieldWriter(fw)
}

// send100Continue answers "Expect: 100-continue" when the handler starts
// reading the body, unless a response is under way.
func (w *responseWriter) send100Continue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sent100 || w.wroteHeader || w.finished {
		return
	}
	w.sent100 = true
	w.sendInterimLocked(http.StatusContinue, nil)
}

func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.connect != nil && w.connect.stream != nil:
		return 0, errStreamTaken
	case w.finished:
		return 0, errWriteAfterHandler
	case !bodyAllowed(w.status):
		return 0, http.ErrBodyNotAllowed
	case w.err != nil:
		return 0, w.err
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.isHead {
		return len(p), nil
	}
	if w.bufp == nil {
		w.bufp = writeBuffers.Get().(*[]byte)
	}
	buf := *w.bufp
	if len(buf)+len(p) <= cap(buf) {
		*w.bufp = append(buf, p...)
		return len(p), nil
	}
	if err := w.flushLocked(); err != nil {
		return 0, err
	}
	if len(p) < writeBufferSize/2 {
		*w.bufp = append((*w.bufp)[:frameRoom], p...)
		return len(p), nil
	}
	// A large write goes out as its own DATA frame, without a copy.
	var hdr []byte
	if !w.sentHeader {
		hdr = w.headerFrameLocked(nil, p)
	}
	hdr = appendFrameHeader(hdr, frameData, uint64(len(p)))
	if _, err := w.g.Write(hdr); err != nil {
		w.err = err
		return 0, err
	}
	if _, err := w.g.Write(p); err != nil {
		w.err = err
		return 0, err
	}
	return len(p), nil
}

// trailerPrefix is http.TrailerPrefix as a field name in HTTP/3's lower
// case (RFC 9114 section 4.2).
var trailerPrefix = strings.ToLower(http.TrailerPrefix)

// isTrailerAnnouncement reports a header field that names a trailer the
// handler sets after the body: it belongs in the trailers, not the
// header.
func isTrailerAnnouncement(name string) bool { return strings.HasPrefix(name, trailerPrefix) }

// headerFrameLocked appends the final HEADERS frame to b: the fields
// encoded when WriteHeader snapshot the header, and those left for now;
// first is the start of the body for content sniffing.
func (w *responseWriter) headerFrameLocked(b, first []byte) []byte {
	w.sentHeader = true
	fw := w.fields
	w.fields = nil
	if fw == nil {
		fw = w.encodeFieldsLocked(w.snap, false)
	}
	if w.later.sniff && len(first) > 0 {
		fw.field("content-type", http.DetectContentType(first))
	}
	if w.later.date {
		fw.field("date", responseDates.format(time.Now()))
	}
	if w.later.length {
		fw.field("content-length", strconv.FormatInt(w.written, 10))
	}
	if sz := w.s.peerFieldLimit(w); sz > 0 && fw.size > sz {
		w.s.logf("http3: response header of %d bytes above the client's limit of %d", fw.size, sz)
	}
	b = fw.frame(b)
	putFieldWriter(fw)
	return b
}

// flushLocked sends the header if not yet sent, and the buffered data.
func (w *responseWriter) flushLocked() error {
	_, err := w.flushFinLocked(false)
	return err
}

// flushFinLocked is flushLocked that, with fin, ends the stream with the
// last frame it writes, and reports whether it did: the FIN then leaves
// with the data, and the connection is woken once for both. It writes
// nothing, and closes nothing, when nothing is left to send.
func (w *responseWriter) flushFinLocked(fin bool) (closed bool, err error) {
	if w.err != nil {
		return false, w.err
	}
	var data []byte
	if w.bufp != nil {
		data = (*w.bufp)[frameRoom:]
	}
	if w.sentHeader && len(data) == 0 {
		return false, nil
	}
	// The frames' headers are built in room on the stack, and copied
	// into the buffer's room before the data.
	var room [frameRoom]byte
	prefix := room[:0]
	if !w.sentHeader {
		prefix = w.headerFrameLocked(prefix, data)
	}
	if len(data) > 0 {
		prefix = appendFrameHeader(prefix, frameData, uint64(len(data)))
	}
	if len(prefix) <= frameRoom && w.bufp != nil {
		// One write: the frames' headers go into the room before the
		// data.
		out := (*w.bufp)[frameRoom-len(prefix):]
		copy(out, prefix)
		_, w.err = w.writeLocked(out, fin)
	} else if len(data) == 0 {
		_, w.err = w.writeLocked(prefix, fin)
	} else if _, w.err = w.g.Write(prefix); w.err == nil {
		_, w.err = w.writeLocked(data, fin)
	}
	if w.bufp != nil {
		*w.bufp = (*w.bufp)[:frameRoom]
	}
	return fin && w.err == nil, w.err
}

// writeLocked writes p to the stream, and ends the stream with it when
// fin is set.
func (w *responseWriter) writeLocked(p []byte, fin bool) (int, error) {
	if fin {
		return w.g.WriteClose(p)
	}
	return w.g.Write(p)
}

// Flush sends the header and the buffered data (http.Flusher).
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush with its error, for http.ResponseController.
func (w *responseWriter) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished {
		return errWriteAfterHandler
	}
	return w.flushLocked()
}

// SetReadDeadline sets the deadline for reading the request body
// (http.ResponseController).
func (w *responseWriter) SetReadDeadline(t time.Time) error { return w.g.SetReadDeadline(t) }

// SetWriteDeadline sets the deadline for writing the response
// (http.ResponseController).
func (w *responseWriter) SetWriteDeadline(t time.Time) error { return w.g.SetWriteDeadline(t) }

// EnableFullDuplex lets the handler read the request while it writes the
// response, which HTTP/3 always allows (http.ResponseController).
func (w *responseWriter) EnableFullDuplex() error { return nil }

// finish completes the response after the handler returned: header,
// buffered data, trailers and FIN. A body shorter than its declared
// content-length resets the stream so that the client sees an error, not
// a short body.
func (w *responseWriter) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.finished = true
	defer w.releaseLocked()
	if w.err != nil {
		w.st.CancelWrite(quic.StreamErrorCode(ErrCodeInternalError))
		return
	}
	if !w.sentHeader && w.declared < 0 && len(w.trailers) == 0 && bodyAllowed(w.status) && !w.connectSuccess() &&
		(w.written > 0 || !w.isHead) && !w.hasPrefixTrailers() {
		w.later.length = true
	}
	short := w.declared >= 0 && w.written < w.declared && !w.isHead && bodyAllowed(w.status)
	// Without trailers and with the whole body, the last frame carries
	// the FIN.
	fin := !short && len(w.trailers) == 0 && !w.hasPrefixTrailers()
	closed, err := w.flushFinLocked(fin)
	if err != nil || closed {
		return
	}
	if short {
		w.s.logf("http3: handler wrote %d bytes of a %d-byte content-length", w.written, w.declared)
		w.st.CancelWrite(quic.StreamErrorCode(ErrCodeInternalError))
		return
	}
	if t := w.trailerHeader(); len(t) > 0 {
		fw := getFieldWriter()
		fw.header(t, nil)
		_, w.err = w.g.Write(fw.frame(nil))
		putFieldWriter(fw)
		if w.err != nil {
			return
		}
	}
	_ = w.st.Close()
}

// connectSuccess reports a 2xx response to an extended CONNECT, which
// carries no content-length (RFC 9110 section 9.3.6).
func (w *responseWriter) connectSuccess() bool {
	return w.connect != nil && w.status >= 200 && w.status < 300
}

func (w *responseWriter) hasPrefixTrailers() bool {
	for k := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			return true
		}
	}
	return false
}

// trailerHeader gathers the trailers: the declared names' values at the
// handler's end, and the names set with http.TrailerPrefix.
func (w *responseWriter) trailerHeader() http.Header {
	var t http.Header
	add := func(k string, vs []string) {
		if len(vs) == 0 {
			return
		}
		if t == nil {
			t = make(http.Header)
		}
		t[http.CanonicalHeaderKey(k)] = vs
	}
	for _, k := range w.trailers {
		add(k, w.header[k])
	}
	for k, vs := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			add(strings.TrimPrefix(k, http.TrailerPrefix), vs)
		}
	}
	return t
}

// abort resets the stream after a panic in the handler.
func (w *responseWriter) abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.finished = true
	w.st.CancelWrite(quic.StreamErrorCode(ErrCodeInternalError))
	w.releaseLocked()
}

func (w *responseWriter) releaseLocked() {
	if w.fields != nil {
		putFieldWriter(w.fields)
		w.fields = nil
	}
	if w.bufp != nil {
		*w.bufp = (*w.bufp)[:frameRoom]
		writeBuffers.Put(w.bufp)
		w.bufp = nil
	}
}
