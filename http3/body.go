package http3

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// streamReaderSize is the buffer of a request stream's reader; reads of
// body data larger than it bypass it.
const streamReaderSize = 4 << 10

var streamReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, streamReaderSize) }}

// getStreamReader returns a pooled reader of rd.
func getStreamReader(rd io.Reader) *bufio.Reader {
	r := streamReaders.Get().(*bufio.Reader)
	r.Reset(rd)
	return r
}

func putStreamReader(r *bufio.Reader) {
	r.Reset(nil)
	streamReaders.Put(r)
}

// errBodyClosed: a read after the body was closed.
var errBodyClosed = errors.New("http3: read on closed body")

// body reads the DATA frames of a request or response stream as a
// stream of bytes, never holding more than a frame header and the
// reader's buffer, then the trailers (RFC 9114 section 4.1). It checks the
// content-length, if any, against what arrives.
type body struct {
	c  *conn
	st *quic.Stream
	r  *bufio.Reader
	// remain is what is left of the current DATA frame.
	remain uint64
	// contentLength is the declared length, or -1.
	contentLength int64
	n             int64
	// maxTrailers bounds the trailer section; trailer receives it.
	maxTrailers uint64
	trailer     *http.Header
	// beforeRead runs before the first read (a server's 100 Continue).
	beforeRead func()
	// response, on a client, is the request whose response this is: it
	// maps the errors of reads that a cancellation caused (mapErr), and
	// learns when the whole body was read (ended).
	response *clientStream
	// pooled: r came from getStreamReader and goes back once the body
	// ended, when no read can use it any more.
	pooled bool
	// mem, on a server, is the request stream's charge: trailers are
	// charged to it, and it is freed with r.
	mem *streamCharge

	mu      sync.Mutex
	err     error // sticky: io.EOF, errBodyClosed, or why reading failed
	closed  bool
	touched bool // a read began
}

func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	err := b.err
	before := b.beforeRead
	b.beforeRead = nil
	b.touched = true
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if before != nil {
		before()
	}
	n, err := b.read(p)
	if err != nil {
		err = b.setErr(err)
	}
	return n, err
}

// setErr records the first error, which later reads return too. The
// protocol errors a read found close the stream or the connection.
func (b *body) setErr(err error) error {
	b.mu.Lock()
	if b.err != nil {
		err = b.err
		b.mu.Unlock()
		return err
	}
	if b.response != nil && err != io.EOF {
		err = b.response.mapErr(err)
	}
	b.err = err
	b.mu.Unlock()
	if err == io.EOF {
		if b.pooled {
			// Reads see the sticky error from now on.
			b.putReader()
		}
		if b.response != nil {
			b.response.ended()
		}
		return err
	}
	if e, ok := asH3(err); ok && !e.Remote {
		if e.Connection {
			b.c.fail(e)
		} else {
			b.st.CancelRead(quic.StreamErrorCode(e.Code))
			b.st.CancelWrite(quic.StreamErrorCode(e.Code))
		}
	}
	return err
}

func (b *body) read(p []byte) (int, error) {
	for b.remain == 0 {
		if err := b.nextFrame(); err != nil {
			return 0, err
		}
	}
	if uint64(len(p)) > b.remain {
		p = p[:b.remain]
	}
	n, err := b.r.Read(p)
	b.remain -= uint64(n)
	b.n += int64(n)
	if b.contentLength >= 0 && b.n > b.contentLength {
		// RFC 9114 section 4.1.2.
		return 0, streamError(ErrCodeMessageError, "body longer than its content-length %d", b.contentLength)
	}
	if err == io.EOF {
		// The stream ended inside a DATA frame (RFC 9114 section 7.1).
		if n > 0 {
			return n, nil
		}
		return 0, connError(ErrCodeFrameError, "stream ends inside a DATA frame")
	}
	if err != nil {
		return n, fromQUIC(err)
	}
	return n, nil
}

// nextFrame reads frame headers up to the next DATA frame, or to the end
// of the stream after optional trailers.
func (b *body) nextFrame() error {
	f, err := readRequestFrameIn(b.r, 2*b.maxTrailers, b.trailerBudget())
	if b.mem != nil && f.typ == frameHeaders {
		// The payload is decoded below, before anything can use it.
		defer b.mem.trailersDone()
	}
	switch {
	case err == io.EOF:
		return b.atEnd()
	case errors.Is(err, errNoMemory):
		return streamError(ErrCodeExcessiveLoad, "no memory for trailers of %d bytes", f.length)
	case errors.Is(err, errFieldSectionTooLarge):
		return streamError(ErrCodeExcessiveLoad, "trailers of %d bytes", f.length)
	case err != nil:
		return fromQUIC(err)
	}
	switch f.typ {
	case frameData:
		b.remain = f.length
		return nil
	case framePushPromise:
		return b.pushPromise()
	}
	// HEADERS: the trailers, after which only the end of the stream may
	// come (RFC 9114 section 4.1).
	fields, err := decodeFieldSection(f.payload, b.maxTrailers)
	if errors.Is(err, errFieldSectionTooLarge) {
		return streamError(ErrCodeExcessiveLoad, "trailers above %d bytes", b.maxTrailers)
	}
	if err != nil {
		return err
	}
	h, err := parseTrailerFields(fields)
	if err != nil {
		return err
	}
	f, err = readRequestFrame(b.r, 0)
	switch {
	case err == io.EOF:
	case err == nil || errors.Is(err, errFieldSectionTooLarge):
		if f.typ == framePushPromise {
			return b.pushPromise()
		}
		return connError(ErrCodeFrameUnexpected, "frame type %#x after trailers", f.typ)
	default:
		return fromQUIC(err)
	}
	if b.trailer != nil {
		if *b.trailer == nil {
			*b.trailer = make(http.Header, len(h))
		}
		for k, v := range h {
			(*b.trailer)[k] = v
		}
	}
	if err := b.atEnd(); err != io.EOF {
		return err
	}
	return io.EOF
}

// pushPromise: a client never allowed a push (it sends no MAX_PUSH_ID),
// and a server never receives one (RFC 9114 section 7.2.5).
func (b *body) pushPromise() error {
	if b.c.isServer {
		return connError(ErrCodeFrameUnexpected, "PUSH_PROMISE from a client")
	}
	return connError(ErrCodeIDError, "PUSH_PROMISE without MAX_PUSH_ID")
}

// atEnd checks the length of a body that ended.
func (b *body) atEnd() error {
	if b.contentLength >= 0 && b.n != b.contentLength {
		return streamError(ErrCodeMessageError, "body of %d bytes, content-length %d", b.n, b.contentLength)
	}
	return io.EOF
}

// stopUnread ends a body no read has touched, and returns its reader to
// the pool; it reports whether the body was read to its end.
func (b *body) stopUnread() (complete bool) {
	b.mu.Lock()
	complete = b.err == io.EOF
	untouched := !b.touched
	if b.err == nil {
		b.err = errBodyClosed
	}
	b.mu.Unlock()
	if untouched && b.pooled {
		b.putReader()
	}
	return complete
}

// putReader returns the reader to the pool and frees the stream's
// charge for it.
func (b *body) putReader() {
	putStreamReader(b.r)
	b.r = nil
	if b.mem != nil {
		b.mem.release()
	}
}

// trailerBudget returns what a trailer section is charged to, if
// anything.
func (b *body) trailerBudget() payloadBudget {
	if b.mem == nil {
		return nil
	}
	return b.mem
}

// Close stops reading; onClose learns whether the body ended first.
func (b *body) close(onClose func(complete bool)) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	complete := b.err == io.EOF
	if b.err == nil {
		b.err = errBodyClosed
	}
	b.mu.Unlock()
	if onClose != nil {
		onClose(complete)
	}
	return nil
}

// wakeReader makes a read waiting on the stream return at once.
func wakeReader(st *quic.Stream) { _ = st.SetReadDeadline(aLongTimeAgo) }

// isDeadline reports a stream deadline error.
func isDeadline(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// aLongTimeAgo is a deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)
