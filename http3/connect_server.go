package http3

import (
	"errors"
	"net/http"

	"github.com/satquic/satquic/quic"
)

// HTTPStreamer is implemented by the http.ResponseWriter of a Server: a
// handler of an extended CONNECT request takes the request stream with
// HTTPStream once it accepted the request with a 2xx status.
//
// An extended CONNECT reaches the handler with r.Method "CONNECT",
// r.Proto the :protocol (for example "connect-ip") and r.URL the
// :scheme, :authority and :path (RFC 9220 section 3). The stream stays
// open after the handler returns, until the Stream's owner closes it,
// the client does, or the connection ends; r.Context() ends with the
// handler, Stream.Context() with the stream.
//
// What bounds the tunnels a client holds: each counts against the QUIC
// configuration's MaxIncomingStreams until both ends closed it, and
// MaxRequestMemory counts its 4 KiB read buffer until it ends. Neither
// IdleStreamTimeout nor ReadHeaderTimeout applies to a tunnel once its
// header was read: a tunnel may be quiet for as long as its peers like
// (the QUIC idle timeout still ends a dead connection).
// ResponseStallTimeout does apply to its writes: a client that takes no
// byte of the stream for that long has its tunnel reset.
type HTTPStreamer interface {
	// HTTPStream sends the response header, if not yet sent, and
	// returns the stream, from then on the caller's. It returns nil if
	// the request is not an extended CONNECT, if the status is not
	// 2xx, or if the handler already returned.
	HTTPStream() *Stream
}

var _ HTTPStreamer = (*responseWriter)(nil)

// errStreamTaken: a write to the ResponseWriter after HTTPStream.
var errStreamTaken = errors.New("http3: ResponseWriter used after HTTPStream")

// connectState is an extended CONNECT's side of a responseWriter.
type connectState struct {
	g *streamGuard
	b *body
	// datagrams is the stream's datagram queue, registered as soon as
	// the request was read so that none is lost while the handler
	// decides; nil without HTTP datagrams.
	datagrams chan []byte
	stream    *Stream // once HTTPStream took it
}

// prepareConnect readies an extended CONNECT's stream for a long life:
// no idle timeout on its reads, no content-length on its body (RFC 9110
// section 9.3.6), and a queue for its HTTP datagrams.
func (sc *serverConn) prepareConnect(g *streamGuard, b *body) *connectState {
	g.mu.Lock()
	g.readIdle = 0
	g.mu.Unlock()
	b.contentLength = -1
	cs := &connectState{g: g, b: b}
	if sc.datagrams != nil {
		cs.datagrams = sc.datagrams.register(g.st.StreamID())
	}
	return cs
}

// end unregisters the datagrams of a stream the handler did not take.
func (cs *connectState) end(c *conn, id quic.StreamID) {
	if cs != nil && cs.datagrams != nil {
		c.datagrams.unregister(id)
	}
}

// takenStream returns the Stream the handler took, if any.
func (w *responseWriter) takenStream() *Stream {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.connect == nil {
		return nil
	}
	return w.connect.stream
}

// HTTPStream implements HTTPStreamer.
func (w *responseWriter) HTTPStream() *Stream {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	cs := w.connect
	if cs == nil || (w.finished && cs.stream == nil) || w.status < 200 || w.status > 299 {
		return nil
	}
	if cs.stream != nil {
		return cs.stream
	}
	// RFC 9110 section 9.3.6: a 2xx response to CONNECT has no
	// content-length.
	w.snap.Del("Content-Length")
	w.declared = -1
	err := w.flushLocked()
	w.finished = true
	w.releaseLocked()
	s := newStream(w.sc, w.st, w.g, cs.b, cs.datagrams)
	cs.stream = s
	if err != nil {
		s.cancel(fromQUIC(err))
	}
	// A write the client's flow control stalls for ResponseStallTimeout
	// resets the stream (guard.go): that ends the tunnel too.
	cs.g.mu.Lock()
	onReset := cs.g.onReset
	cs.g.onReset = func(error) {
		if onReset != nil {
			onReset(nil)
		}
		s.cancel(streamError(ErrCodeRequestCancelled, "the client took no data for the stall timeout"))
	}
	cs.g.mu.Unlock()
	return s
}

// DatagramsEnabled reports whether the request w answers may carry HTTP
// datagrams: this server enabled them and the client's SETTINGS did too
// (SETTINGS_H3_DATAGRAM over QUIC DATAGRAM frames, RFC 9297 section
// 2.1.1). For an extended CONNECT the server waited for the client's
// SETTINGS before the handler ran (at most 5 s). It is false for a
// ResponseWriter of another package.
func DatagramsEnabled(w http.ResponseWriter) bool {
	rw, ok := w.(*responseWriter)
	if !ok || rw.sc == nil || rw.sc.datagrams == nil {
		return false
	}
	p, ok := rw.sc.peerSettings()
	return ok && p.h3Datagram
}
