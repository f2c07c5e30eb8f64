package http3

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/satquic/satquic/quic"
)

// ErrExtendedConnectNotSupported: the server's SETTINGS did not enable
// extended CONNECT (SETTINGS_ENABLE_CONNECT_PROTOCOL, RFC 9220 section
// 3), so the request was not sent.
var ErrExtendedConnectNotSupported = errors.New("http3: the server does not allow extended CONNECT")

// ExtendedConnect sends an extended CONNECT request (RFC 9220): req.Method
// must be "CONNECT", req.Proto names the protocol (the :protocol pseudo-header,
// for example "connect-ip"), and req.URL gives :scheme, :authority and
// :path. The request is sent once the server's SETTINGS arrived, and only
// if they allow extended CONNECT (else ErrExtendedConnectNotSupported).
//
// With a 2xx response it returns the request stream, which stays open
// until Close, the server's end of it, or the end of the connection;
// the response's Body is then empty. With another status the Stream is
// nil and the response's Body holds what the server sent, to be closed.
// ctx bounds the exchange up to the response header; the stream outlives
// it. An open stream keeps its connection in use, and counts against the
// server's stream limit, until it ends.
func (t *Transport) ExtendedConnect(ctx context.Context, req *http.Request) (*http.Response, *Stream, error) {
	if err := checkExtendedConnect(req); err != nil {
		return nil, nil, err
	}
	cc, err := t.getConn(ctx, authority(req.URL.Host, "443"))
	if err != nil {
		return nil, nil, err
	}
	return cc.extendedConnect(ctx, req)
}

// checkExtendedConnect refuses a request that cannot be an extended
// CONNECT.
func checkExtendedConnect(req *http.Request) error {
	switch {
	case req.Method != http.MethodConnect:
		return fmt.Errorf("http3: extended CONNECT with method %q", req.Method)
	case !validToken(req.Proto) || strings.HasPrefix(req.Proto, "HTTP/"):
		return fmt.Errorf("http3: extended CONNECT needs the protocol in Request.Proto, not %q", req.Proto)
	case req.URL == nil || req.URL.Host == "" || req.URL.Scheme == "":
		return errors.New("http3: extended CONNECT needs a URL with a scheme and a host")
	case req.Body != nil && req.Body != http.NoBody:
		return errors.New("http3: extended CONNECT with a body: write to the Stream instead")
	}
	return nil
}

// encodeExtendedConnect encodes the HEADERS frame of an extended CONNECT:
// all four pseudo-headers besides :method, and :protocol (RFC 9220 section
// 3, RFC 8441 section 4).
func encodeExtendedConnect(req *http.Request) ([]byte, uint64, error) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	path := req.URL.RequestURI()
	if !validFieldValue(host) || strings.ContainsAny(host, " /") || !validFieldValue(path) || !validFieldValue(req.URL.Scheme) {
		return nil, 0, fmt.Errorf("http3: invalid URL %q", req.URL)
	}
	if err := checkRequestHeader(req.Header); err != nil {
		return nil, 0, err
	}
	fw := getFieldWriter()
	defer putFieldWriter(fw)
	fw.field(":method", http.MethodConnect)
	fw.field(":protocol", req.Proto)
	fw.field(":scheme", req.URL.Scheme)
	fw.field(":authority", host)
	fw.field(":path", path)
	fw.header(req.Header, func(name string) bool {
		return name == "host" || name == "content-length" || name == "trailer"
	})
	return fw.frame(nil), fw.size, nil
}

// extendedConnect sends an extended CONNECT on the connection, whose
// place the caller reserved.
func (cc *clientConn) extendedConnect(ctx context.Context, req *http.Request) (*http.Response, *Stream, error) {
	st, err := cc.openConnect(ctx, req)
	if err != nil {
		cc.release()
		return nil, nil, err
	}
	var datagrams chan []byte
	if cc.datagrams != nil {
		// Before the request leaves, so that no datagram the server
		// sends with its response finds the stream unknown.
		datagrams = cc.datagrams.register(st.StreamID())
	}
	resp, s, err := cc.exchangeConnect(ctx, req, st, datagrams)
	if s == nil && datagrams != nil {
		cc.datagrams.unregister(st.StreamID())
	}
	if err != nil {
		code := ErrCodeRequestCancelled
		if e, ok := asH3(err); ok && !e.Remote {
			// A malformed response: the stream or the connection ends
			// with the code RFC 9114 names.
			if e.Connection {
				cc.fail(e)
			}
			code = e.Code
		}
		st.CancelWrite(quic.StreamErrorCode(code))
		st.CancelRead(quic.StreamErrorCode(code))
		cc.release()
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, nil, err
	}
	return resp, s, nil
}

// openConnect waits for the server's SETTINGS, checks that they allow
// the request, and opens its stream once the handshake completed
// (CONNECT is not safe to replay, RFC 9114 section 10.9).
func (cc *clientConn) openConnect(ctx context.Context, req *http.Request) (*quic.Stream, error) {
	peer, err := cc.waitSettings(ctx)
	if err != nil {
		return nil, err
	}
	if !peer.enableConnectProtocol {
		return nil, ErrExtendedConnectNotSupported
	}
	if !waitHandshake(ctx, cc.qc) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("http3: connection ended: %w", fromQUIC(context.Cause(cc.qc.Context())))
	}
	return cc.openStream(ctx)
}

// exchangeConnect sends the request on st and reads the response
// header; the stream ends if ctx does first.
func (cc *clientConn) exchangeConnect(ctx context.Context, req *http.Request, st *quic.Stream, datagrams chan []byte) (*http.Response, *Stream, error) {
	hdr, size, err := encodeExtendedConnect(req)
	if err != nil {
		return nil, nil, err
	}
	if p, _ := cc.peerSettings(); p.hasMaxFieldSectionSize && size > p.maxFieldSectionSize {
		return nil, nil, fmt.Errorf("http3: request header of %d bytes above the server's limit of %d", size, p.maxFieldSectionSize)
	}
	stop := context.AfterFunc(ctx, func() { wakeReader(st) })
	if _, err := st.Write(hdr); err != nil {
		stop()
		return nil, nil, fromQUIC(err)
	}
	r := getStreamReader(st)
	limit := cc.t.maxHeaderBytes()
	status, header, err := readFinalHeader(r, limit, nil)
	if !stop() && err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, nil, fromQUIC(err)
	}
	resp := &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        header,
		ContentLength: -1,
		Request:       req,
		TLS:           cc.tls(),
	}
	declareTrailers(header, &resp.Trailer)
	b := &body{c: cc.conn, st: st, r: r, contentLength: -1, maxTrailers: limit, trailer: &resp.Trailer, pooled: true}
	if status >= 200 && status < 300 {
		resp.Body = http.NoBody
		s := newStream(cc.conn, st, st, b, datagrams)
		context.AfterFunc(s.Context(), cc.release)
		return resp, s, nil
	}
	if cl, err := parseContentLength(header); err == nil {
		b.contentLength, resp.ContentLength = cl, cl
	}
	resp.Body = &refusedConnectBody{b: b, st: st, cc: cc}
	return resp, nil, nil
}

// refusedConnectBody is the Body of a response that refused an extended
// CONNECT: closing it ends the stream and the request's use of the
// connection.
type refusedConnectBody struct {
	b    *body
	st   *quic.Stream
	cc   *clientConn
	once sync.Once
}

func (rb *refusedConnectBody) Read(p []byte) (int, error) { return rb.b.Read(p) }

func (rb *refusedConnectBody) Close() error {
	rb.once.Do(func() {
		_ = rb.b.close(nil)
		rb.st.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
		_ = rb.st.Close()
		rb.cc.release()
	})
	return nil
}
