package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// ErrRefused is wrapped by Dial's error when the server answered the
// request with a status other than 2xx: 401 or 403 for credentials it did
// not accept.
var ErrRefused = errors.New("the server refused the tunnel")

// ErrPathMTU is wrapped by Dial's error when the QUIC path cannot carry
// an IPv6 minimum-MTU packet in an HTTP datagram.
var ErrPathMTU = errors.New("the path's MTU is too small for a tunnel")

// DefaultMTUWait bounds the wait for path MTU discovery in Dial.
const DefaultMTUWait = 5 * time.Second

// DialOptions configure Dial.
type DialOptions struct {
	// Token is sent as a bearer token (RFC 6750 section 2.1).
	Token string
	// TLSConfig configures TLS (RootCAs, a client certificate,
	// InsecureSkipVerify); nil verifies the server with the system's
	// roots.
	TLSConfig *tls.Config
	// QUIC configures the connection as QUICConfig does: nil means FEC
	// on under the auto policy. Each Dial opens its own HTTP/3
	// transport: a caller that dials again (a reconnecting client) keeps
	// the server's address validation tokens (NEW_TOKEN, RFC 9000
	// section 8.1.3) across dials only through one QUIC.TokenStore shared
	// by them, as satquic tunnel client does.
	QUIC *quic.Config
	// MTU caps the inner MTU (zero: what the path carries).
	MTU int
	// MTUWait bounds the wait for path MTU discovery to let a datagram
	// carry a 1280-byte packet (zero: DefaultMTUWait).
	MTUWait time.Duration
	// Timeout bounds the wait for the proxy's addresses and routes
	// (connectip.ClientConfig.Timeout).
	Timeout time.Duration
}

// ClientTunnel is the client end of a tunnel that Dial opened.
type ClientTunnel struct {
	// Session carries the IP packets: the Session a tunnel.Forwarder
	// runs on.
	Session *connectip.Session
	// Prefixes are the addresses the proxy assigned, Routes the
	// destinations it advertised.
	Prefixes []netip.Prefix
	Routes   []connectip.IPRoute
	// MTU is the inner MTU: the largest IP packet one HTTP datagram
	// carries on the path, at least 1280.
	MTU int

	tr           *http3.Transport
	conn         *quic.Conn
	pathTooSmall *atomic.Uint64
	closeOnce    sync.Once
}

// Dial opens a tunnel to the CONNECT-IP server at rawURL ("https://host:port",
// whose path, if any, is the template's; empty means the default one for
// the scope */*).
func Dial(ctx context.Context, rawURL string, opts DialOptions) (*ClientTunnel, error) {
	u, err := tunnelURL(rawURL)
	if err != nil {
		return nil, err
	}
	ct := &ClientTunnel{pathTooSmall: new(atomic.Uint64)}
	ct.tr = ct.newTransport(opts)
	st, err := ct.connect(ctx, u, opts.Token)
	if err != nil {
		_ = ct.tr.Close()
		return nil, err
	}
	if err := ct.start(ctx, st, opts); err != nil {
		_ = st.Close()
		_ = ct.tr.Close()
		return nil, err
	}
	return ct, nil
}

// newTransport returns the HTTP/3 transport of the tunnel, which keeps
// the QUIC connection it dials in ct.
func (ct *ClientTunnel) newTransport(opts DialOptions) *http3.Transport {
	return &http3.Transport{
		TLSClientConfig: opts.TLSConfig,
		QUICConfig:      QUICConfig(opts.QUIC),
		EnableDatagrams: true,
		Dial: func(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error) {
			c, err := quic.DialAddr(ctx, addr, tlsConf, conf)
			if err == nil {
				// A new Transport dials once: this is the tunnel's
				// connection, read after ExtendedConnect returns.
				ct.conn = c
			}
			return c, err
		},
	}
}

// tunnelURL checks the server's URL and puts the default path in.
func tunnelURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("gateway: server URL: %w", err)
	}
	if u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("gateway: server URL %q: want https://host:port", rawURL)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path, u.RawPath = "", ""
		u, err = u.Parse(connectip.AnyScope.Path())
		if err != nil {
			return nil, fmt.Errorf("gateway: server URL: %w", err)
		}
	}
	return u, nil
}

// connect sends the extended CONNECT (RFC 9484 section 4) and returns
// the request stream once the server accepted it.
func (ct *ClientTunnel) connect(ctx context.Context, u *url.URL, token string) (*http3.Stream, error) {
	req := &http.Request{
		Method: http.MethodConnect,
		Proto:  "connect-ip",
		URL:    u,
		Header: http.Header{http3.CapsuleProtocolHeader: {http3.CapsuleProtocolValue}},
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, st, err := ct.tr.ExtendedConnect(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("gateway: %s: %w", u.Host, err)
	}
	if st == nil {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
		return nil, fmt.Errorf("gateway: %w: %s (%s)", ErrRefused, resp.Status, strings.TrimSpace(string(msg)))
	}
	return st, nil
}

// start waits for a path that carries the tunnel and starts the client
// session.
func (ct *ClientTunnel) start(ctx context.Context, st *http3.Stream, opts DialOptions) error {
	mtu, err := ct.waitMTU(ctx, opts.MTUWait)
	if err != nil {
		return err
	}
	if opts.MTU > 0 {
		if opts.MTU < minTunnelMTU {
			return fmt.Errorf("gateway: an MTU of %d is below the %d bytes a tunnel carries", opts.MTU, minTunnelMTU)
		}
		mtu = min(mtu, opts.MTU)
	}
	cfg := connectip.ClientConfig{Config: connectip.Config{MTU: mtu}, Timeout: opts.Timeout}
	sess, err := connectip.NewClient(newCarrier(st, ct.pathTooSmall, mtu), cfg)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	ct.Session, ct.MTU = sess, mtu
	ct.Prefixes, ct.Routes = sess.LocalPrefixes(), sess.Routes()
	return nil
}

// mtuPoll is how often waitMTU looks at the connection's datagram size.
const mtuPoll = 10 * time.Millisecond

// waitMTU waits until an HTTP datagram carries a 1280-byte packet, which
// path MTU discovery allows once its first probe came back (the QUIC
// connection starts at 1200-byte datagrams, RFC 9000 section 14), and
// returns the inner MTU.
func (ct *ClientTunnel) waitMTU(ctx context.Context, wait time.Duration) (int, error) {
	if wait <= 0 {
		wait = DefaultMTUWait
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(mtuPoll)
	defer tick.Stop()
	for {
		mtu := innerMTU(ct.conn.MaxDatagramPayloadSize())
		if mtu >= minTunnelMTU {
			return mtu, nil
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return 0, fmt.Errorf("gateway: %w: after %v of path MTU discovery an HTTP datagram carries IP packets of at most %d bytes, and a tunnel needs %d (RFC 9484 section 7.2)",
				ErrPathMTU, wait, mtu, minTunnelMTU)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-ct.conn.Context().Done():
			return 0, fmt.Errorf("gateway: connection ended: %w", context.Cause(ct.conn.Context()))
		}
	}
}

// RemoteAddr is the server's UDP address: a route into the tunnel must
// not cover it, or the tunnel's own packets would loop into it.
func (ct *ClientTunnel) RemoteAddr() net.Addr { return ct.conn.RemoteAddr() }

// ConnStats returns the QUIC connection's statistics: RTT, losses, FEC.
func (ct *ClientTunnel) ConnStats() quic.ConnectionStats { return ct.conn.Stats() }

// PathTooSmall counts packets dropped because their datagram no longer fit
// the QUIC packets (the path's MTU fell).
func (ct *ClientTunnel) PathTooSmall() uint64 { return ct.pathTooSmall.Load() }

// Close ends the session and the connection.
func (ct *ClientTunnel) Close() error {
	ct.closeOnce.Do(func() {
		_ = ct.Session.Close()
		_ = ct.tr.Close()
	})
	return nil
}
