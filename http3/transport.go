package http3

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/satquic/satquic/quic"
)

// Transport is an http.RoundTripper for HTTP/3: it keeps one connection
// per authority ("host:port") and sends concurrent requests over it, as
// many at once as the server's stream limit allows, and opens a new
// connection once the server sent GOAWAY or the connection ended.
//
// With a ClientSessionCache in TLSClientConfig, a new connection to a
// server that gave a session ticket resumes the session, and, if the
// ticket allows it, sends its requests in 0-RTT, with its first flight:
// the response comes a round trip earlier. It then also returns the
// address validation token the server gave the last connection (a
// TokenStore of the Transport's own, unless QUICConfig has one), so that
// the server may answer at once with more than three times what the
// client sent (RFC 9000 section 8.1). Only requests with a safe
// method (GET, HEAD, OPTIONS, TRACE) go early, since 0-RTT data can be
// replayed (RFC 9114 section 10.9); the others wait for the handshake.
// Early data the server rejects is sent again once the handshake
// completed.
type Transport struct {
	// TLSClientConfig configures TLS; its NextProtos are replaced by
	// "h3" and an empty ServerName is the URL's host.
	// InsecureSkipVerify disables certificate checks (tests and tools).
	TLSClientConfig *tls.Config
	// QUICConfig configures the QUIC connections.
	QUICConfig *quic.Config
	// Dial, if set, opens connections instead of quic.DialAddr (or
	// quic.DialAddrEarly when the session cache holds a ticket that
	// allows 0-RTT). It may return before the handshake completed, as
	// DialAddrEarly does: safe requests then go in 0-RTT (see below).
	Dial func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error)
	// MaxResponseHeaderBytes bounds a response's field section as RFC 9114
	// section 4.2.2 counts it, announced in SETTINGS_MAX_FIELD_SECTION_SIZE
	// (default http.DefaultMaxHeaderBytes, 1 MiB).
	MaxResponseHeaderBytes int64
	// DisableCompression stops the Transport from asking for gzip when a
	// request names no Accept-Encoding. When it asked, it decompresses
	// the response transparently, as net/http's Transport does.
	DisableCompression bool
	// EnableDatagrams advertises SETTINGS_H3_DATAGRAM (RFC 9297 section
	// 2.1.1) on the connections whose QUIC layer negotiated DATAGRAM
	// frames (RFC 9221), so that the streams of ExtendedConnect carry
	// HTTP datagrams.
	// It offers the QUIC DATAGRAM frames too, whatever QUICConfig says.
	EnableDatagrams bool

	// datagramSource, if set, carries HTTP datagrams instead of the
	// QUIC connections' DATAGRAM frames; datagramCounts counts those
	// dropped.
	datagramSource datagramSource
	datagramCounts datagramCounters

	tokensOnce sync.Once
	tokens     quic.TokenStore // when QUICConfig has none (quicConfig)

	mu     sync.Mutex
	conns  map[string]*clientConn // the connection that takes requests, per authority
	all    map[*clientConn]struct{}
	dials  map[string]*dialCall
	closed bool
	ctx    context.Context // ends with Close; dials run under it
	cancel context.CancelFunc
	wg     sync.WaitGroup // dials and connection goroutines
}

var _ http.RoundTripper = (*Transport)(nil)

// ErrTransportClosed: a request on a Transport after its Close.
var ErrTransportClosed = errors.New("http3: transport closed")

type dialCall struct {
	done chan struct{}
	cc   *clientConn
	err  error
}

func (t *Transport) initLocked() {
	if t.conns == nil {
		t.conns = make(map[string]*clientConn)
		t.all = make(map[*clientConn]struct{})
		t.dials = make(map[string]*dialCall)
		t.ctx, t.cancel = context.WithCancel(context.Background())
	}
}

func (t *Transport) maxHeaderBytes() uint64 {
	if t.MaxResponseHeaderBytes > 0 {
		return uint64(t.MaxResponseHeaderBytes)
	}
	return http.DefaultMaxHeaderBytes
}

// authority returns the host:port the request's URL names.
func authority(u string, port string) string {
	host, p, err := net.SplitHostPort(u)
	if err == nil && (strings.IndexByte(host, ':') >= 0 || u[0] != '[') {
		// Already host:port, as JoinHostPort writes it.
		return u
	}
	if err != nil {
		// No port (an IPv6 literal still has its brackets).
		host, p = u, port
		if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
			host = host[1 : len(host)-1]
		}
	}
	return net.JoinHostPort(host, p)
}

// RoundTrip sends one request and returns its response, whose Body
// streams the response and must be closed. Canceling the request's
// context cancels the stream (H3_REQUEST_CANCELLED). A request that the
// server refused without processing it (GOAWAY, H3_REQUEST_REJECTED) is
// sent again on a new connection if its body can be replayed.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("http3: request without URL")
	}
	if req.URL.Scheme != "https" {
		closeBody(req)
		return nil, errors.New("http3: unsupported scheme " + req.URL.Scheme)
	}
	if req.URL.Host == "" {
		closeBody(req)
		return nil, errors.New("http3: no host in request URL")
	}
	key := authority(req.URL.Host, "443")
	ctx := req.Context()
	for attempt := 0; ; attempt++ {
		cc, err := t.getConn(ctx, key)
		if err != nil {
			closeBody(req)
			return nil, err
		}
		resp, err := cc.roundTrip(req)
		if err == nil {
			return resp, nil
		}
		var re *retryableError
		if !errors.As(err, &re) {
			return nil, err
		}
		if attempt >= 3 || ctx.Err() != nil {
			closeBody(req)
			return nil, re.err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				closeBody(req)
				return nil, re.err
			}
			closeBody(req)
			b, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r2 := *req
			r2.Body = b
			req = &r2
		}
	}
}

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// retryableError: the server did not process the request.
type retryableError struct{ err error }

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

// getConn returns a connection to key that takes new requests, with the
// request counted in it, dialing one if needed; concurrent requests share
// one dial.
func (t *Transport) getConn(ctx context.Context, key string) (*clientConn, error) {
	for {
		t.mu.Lock()
		t.initLocked()
		if t.closed {
			t.mu.Unlock()
			return nil, ErrTransportClosed
		}
		if cc := t.conns[key]; cc != nil {
			if cc.reserve() {
				t.mu.Unlock()
				return cc, nil
			}
			delete(t.conns, key)
		}
		d := t.dials[key]
		if d == nil {
			d = &dialCall{done: make(chan struct{})}
			t.dials[key] = d
			t.wg.Add(1)
			go t.dial(key, d)
		}
		t.mu.Unlock()
		select {
		case <-d.done:
			if d.err != nil {
				return nil, d.err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dial opens a connection for getConn. It runs on its own, not under the
// context of the request that caused it, which other requests may share.
func (t *Transport) dial(key string, d *dialCall) {
	defer t.wg.Done()
	cc, err := t.dialConn(key)
	t.mu.Lock()
	delete(t.dials, key)
	if err == nil && t.closed {
		err = ErrTransportClosed
	}
	if err == nil {
		t.conns[key] = cc
		t.all[cc] = struct{}{}
	}
	d.cc, d.err = cc, err
	t.mu.Unlock()
	if err != nil && cc != nil {
		_ = cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
	}
	close(d.done)
}

func (t *Transport) dialConn(key string) (*clientConn, error) {
	host, _, _ := net.SplitHostPort(key)
	var tlsConf *tls.Config
	if t.TLSClientConfig != nil {
		tlsConf = t.TLSClientConfig.Clone()
	} else {
		tlsConf = &tls.Config{}
	}
	tlsConf.NextProtos = []string{NextProtoH3}
	if tlsConf.ServerName == "" {
		tlsConf.ServerName = host
	}
	dial := t.Dial
	if dial == nil {
		dial = quic.DialAddr
		if earlyDataTicket(tlsConf) {
			dial = quic.DialAddrEarly
		}
	}
	qc, err := dial(t.ctx, key, tlsConf, t.quicConfig())
	if err != nil {
		return nil, err
	}
	cc := &clientConn{t: t, key: key}
	cc.conn = newConn(qc, false, settings{maxFieldSectionSize: t.maxHeaderBytes(), hasMaxFieldSectionSize: true})
	cc.onGoAway = cc.goAwayReceived
	if t.EnableDatagrams {
		cc.enableDatagrams(t.datagramSource, &t.datagramCounts)
	}
	if err := cc.start(); err != nil {
		_ = qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeInternalError), "")
		cc.wg.Wait()
		return nil, err
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		cc.watch()
		t.mu.Lock()
		if t.conns[key] == cc {
			delete(t.conns, key)
		}
		delete(t.all, cc)
		t.mu.Unlock()
	}()
	return cc, nil
}

// DroppedDatagrams returns how many HTTP datagrams the Transport's
// connections dropped: for no stream open with their Quarter Stream ID
// (RFC 9297 section 2.1), and for a full stream queue.
func (t *Transport) DroppedDatagrams() (unknown, full uint64) {
	return t.datagramCounts.unknown.Load(), t.datagramCounts.full.Load()
}

// CloseIdleConnections closes the connections without requests under way.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	var idle []*clientConn
	for k, cc := range t.conns {
		if cc.idle() {
			idle = append(idle, cc)
			delete(t.conns, k)
		}
	}
	t.mu.Unlock()
	for _, cc := range idle {
		_ = cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
	}
}

// Close closes every connection (requests under way fail) and waits for
// the Transport's goroutines. Later requests fail with ErrTransportClosed.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.initLocked()
	t.closed = true
	t.cancel()
	conns := make([]*clientConn, 0, len(t.all))
	for cc := range t.all {
		conns = append(conns, cc)
	}
	t.conns = map[string]*clientConn{}
	t.mu.Unlock()
	for _, cc := range conns {
		_ = cc.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
	}
	t.wg.Wait()
	return nil
}

// quicConfig is the configuration of a new connection: QUICConfig, with a
// TokenStore of the Transport's own when QUICConfig has none and sessions
// resume. A resumed connection that sends its request in 0-RTT gets its
// answer in 0.5-RTT only as far as the server's anti-amplification limit
// allows (RFC 9000 section 8.1): about two datagrams beside the server's
// handshake flight, unless a token from the last connection proves the
// client's address.
func (t *Transport) quicConfig() *quic.Config {
	needTokens := t.TLSClientConfig != nil && t.TLSClientConfig.ClientSessionCache != nil &&
		(t.QUICConfig == nil || t.QUICConfig.TokenStore == nil)
	needDatagrams := t.EnableDatagrams && (t.QUICConfig == nil || !t.QUICConfig.EnableDatagrams)
	if !needTokens && !needDatagrams {
		return t.QUICConfig
	}
	var c quic.Config
	if t.QUICConfig != nil {
		c = *t.QUICConfig
	}
	if needTokens {
		t.tokensOnce.Do(func() { t.tokens = quic.NewTokenCache(tokenCacheSize) })
		c.TokenStore = t.tokens
	}
	// HTTP datagrams travel in QUIC DATAGRAM frames (RFC 9297 section
	// 2.1.1), so EnableDatagrams offers them.
	c.EnableDatagrams = c.EnableDatagrams || t.EnableDatagrams
	return &c
}

// tokenCacheSize is how many servers' tokens a Transport keeps.
const tokenCacheSize = 64
