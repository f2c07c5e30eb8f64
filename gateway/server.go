package gateway

import (
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/tunnel"
)

// ServerConfig configures a Server.
type ServerConfig struct {
	// Token, if set, admits a client whose request carries it as a
	// bearer token (connectip.CheckToken).
	Token string
	// Tokens admit clients as Token does, one each: every token is a
	// client of its own for MaxTunnelsPerClient, where clients that
	// share a token count as one.
	Tokens []string
	// ClientCertificates admits a client whose certificate the TLS
	// handshake verified: the TLS configuration must then ask for one
	// (tls.VerifyClientCertIfGiven or RequireAndVerifyClientCert, with
	// ClientCAs). With Token as well, either admits.
	ClientCertificates bool
	// Pool holds the clients' addresses: each client gets one of each
	// IP version among them (connectip.AddressPool).
	Pool []netip.Prefix
	// Local are the addresses of the server's own end of the tunnel (its
	// device's), kept out of the pool: typically the first address of
	// each pool prefix.
	Local []netip.Addr
	// Routes are advertised to every client: the destinations it may
	// send to. Empty means the pool's prefixes: the clients reach the
	// server's end of the tunnel and one another, and nothing beyond
	// unless the operator says so.
	Routes []netip.Prefix
	// MTU is the largest IP packet sent to a client, the device's MTU
	// (zero: the device's own); a packet that does not fit the client's
	// QUIC path is dropped and counted (Stats.PathTooSmall), and the
	// later ones are answered with ICMP giving the path's size.
	MTU int
	// QueueLen is the forwarder's device queue (tunnel.Config).
	QueueLen int
	// MaxTunnelsPerClient bounds the tunnels open at once with one
	// credential (a token, or a client certificate), and
	// MaxTunnelsPerSource those from one IPv4 address or IPv6 /64; a
	// request beyond either is answered 429 Too Many Requests (RFC 6585
	// section 4) and counted. Zero means DefaultMaxTunnelsPerClient (8)
	// and DefaultMaxTunnelsPerSource (64), negative no bound.
	MaxTunnelsPerClient int
	MaxTunnelsPerSource int
	// ErrorLog receives the reasons clients were refused (at most one
	// refusal a second; Stats counts them all); nil discards
	// them.
	ErrorLog *log.Logger
	// StatelessResetKey and TokenKey are the QUIC Transport's keys
	// (quic.Transport): kept across restarts, a restarted server resets
	// the connections of its last run at once (their clients reconnect
	// rather than wait for their idle timeout) and takes the address
	// validation tokens it gave. Nil draws a key per Serve.
	StatelessResetKey *quic.StatelessResetKey
	TokenKey          *quic.TokenKey
}

// Server is the server end of the tunnel: an http.Handler for CONNECT-IP
// requests whose clients share one Device. Serve or ListenAndServe run
// it.
type Server struct {
	cfg    ServerConfig
	dev    tunnel.Device
	pool   *connectip.AddressPool
	routes []connectip.IPRoute
	v4, v6 bool // the pool has addresses of this version
	mux    *mux
	fwd    *tunnel.Forwarder
	counts *tunnelCounts

	h3        atomic.Pointer[http3.Server] // once Serve runs
	refused   atomic.Uint64
	exhausted atomic.Uint64
	// overClient and overSource count requests refused at a bound.
	overClient atomic.Uint64
	overSource atomic.Uint64
	// lastRefusalLog is the Unix second of the last refusal logged.
	lastRefusalLog atomic.Int64
	pathTooSmall   atomic.Uint64
	noDatagrams    atomic.Uint64 // requests of clients without HTTP datagrams
}

// NewServer returns a Server whose clients' packets go through dev.
func NewServer(dev tunnel.Device, cfg ServerConfig) (*Server, error) {
	if cfg.Token == "" && len(cfg.Tokens) == 0 && !cfg.ClientCertificates {
		return nil, errors.New("gateway: a server needs a token or client certificates to admit its clients")
	}
	if len(cfg.Pool) == 0 {
		return nil, errors.New("gateway: a server needs an address pool")
	}
	pool, err := connectip.NewAddressPool(cfg.Pool...)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	for _, a := range cfg.Local {
		if p, err := pool.Allocate(a); err != nil || p.Addr() != a {
			return nil, fmt.Errorf("gateway: the server's address %v is not a free address of the pool", a)
		}
	}
	if cfg.MTU <= 0 {
		cfg.MTU = dev.MTU()
	}
	for _, t := range cfg.Tokens {
		if t == "" {
			return nil, errors.New("gateway: an empty token would admit nobody")
		}
	}
	s := &Server{cfg: cfg, dev: dev, pool: pool}
	s.counts = newTunnelCounts(limitOrDefault(cfg.MaxTunnelsPerClient, DefaultMaxTunnelsPerClient),
		limitOrDefault(cfg.MaxTunnelsPerSource, DefaultMaxTunnelsPerSource))
	for _, p := range cfg.Pool {
		s.v4 = s.v4 || p.Addr().Is4()
		s.v6 = s.v6 || p.Addr().Is6()
	}
	routes := cfg.Routes
	if len(routes) == 0 {
		routes = cfg.Pool
	}
	for _, p := range routes {
		s.routes = append(s.routes, connectip.RouteFromPrefix(p.Masked(), 0))
	}
	connectip.SortRoutes(s.routes)
	if err := connectip.CheckRoutes(s.routes); err != nil {
		return nil, fmt.Errorf("gateway: routes: %w", err)
	}
	s.mux = newMux(min(max(dev.MTU(), minTunnelMTU), 65535))
	s.fwd = tunnel.New(dev, s.mux, tunnel.Config{QueueLen: cfg.QueueLen})
	return s, nil
}

// ServeHTTP answers a CONNECT-IP request (RFC 9484 section 4): it checks
// the method, the path and the client, assigns addresses, and starts the
// proxy session on the request stream.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect || r.Proto != "connect-ip" {
		http.Error(w, "this server only opens CONNECT-IP tunnels (extended CONNECT, :protocol connect-ip)", http.StatusMethodNotAllowed)
		return
	}
	path := r.URL.EscapedPath()
	if !strings.HasPrefix(path, connectip.WellKnownPath) {
		http.Error(w, "not a CONNECT-IP path", http.StatusNotFound)
		return
	}
	scope, err := connectip.ParseScopePath(path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if scope != connectip.AnyScope {
		// The tunnel's routes come from the server's configuration; a
		// narrower scope (section 4.6) is not what it offers.
		http.Error(w, "this server only offers the scope */*", http.StatusBadRequest)
		return
	}
	id, status, why := s.admit(r)
	if status != 0 {
		s.refused.Add(1)
		s.logRefusal("gateway: refused %s: %s", r.RemoteAddr, why)
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", "Bearer")
		}
		http.Error(w, why, status)
		return
	}
	src := sourceOf(r.RemoteAddr)
	if !s.takeTunnel(w, r, id, src) {
		return
	}
	s.open(w, r, func() { s.counts.give(id, src) })
}

// admit returns the identity of a client the configuration admits,
// otherwise the status to refuse it with and why.
func (s *Server) admit(r *http.Request) (identity, int, string) {
	if s.cfg.Token != "" && connectip.CheckToken(r, s.cfg.Token) {
		return tokenIdentity(s.cfg.Token), 0, ""
	}
	for _, t := range s.cfg.Tokens {
		if connectip.CheckToken(r, t) {
			return tokenIdentity(t), 0, ""
		}
	}
	if s.cfg.ClientCertificates {
		if cert, ok := connectip.ClientCertificate(r); ok {
			return certIdentity(cert.Raw), 0, ""
		}
	}
	if r.Header.Get("Authorization") == "" {
		return identity{}, http.StatusUnauthorized, "no credentials: a bearer token or a client certificate is needed"
	}
	return identity{}, http.StatusForbidden, "credentials not accepted"
}

// takeTunnel counts a tunnel of id from src, or refuses the request with
// 429 (RFC 6585 section 4) when that goes beyond a bound.
func (s *Server) takeTunnel(w http.ResponseWriter, r *http.Request, id identity, src netip.Prefix) bool {
	var why string
	switch s.counts.take(id, src) {
	case withinLimits:
		return true
	case clientLimit:
		s.overClient.Add(1)
		why = fmt.Sprintf("too many tunnels with these credentials (at most %d at once)", s.counts.perClient)
	case sourceLimit:
		s.overSource.Add(1)
		why = fmt.Sprintf("too many tunnels from %v (at most %d at once)", src, s.counts.perSource)
	}
	s.logRefusal("gateway: refused %s: %s", r.RemoteAddr, why)
	http.Error(w, why, http.StatusTooManyRequests)
	return false
}

// open assigns the client its addresses and runs its session; done is
// called once the tunnel ended, or at once if it could not start.
func (s *Server) open(w http.ResponseWriter, r *http.Request, done func()) {
	if _, isH3 := w.(http3.HTTPStreamer); isH3 && !http3.DatagramsEnabled(w) {
		// The tunnel's packets travel only as HTTP datagrams in QUIC
		// DATAGRAM frames (RFC 9484 section 6), which a client must
		// enable in its SETTINGS (RFC 9297 section 2.1.1).
		done()
		s.noDatagrams.Add(1)
		s.logRefusal("gateway: refused %s: the client did not enable HTTP datagrams", r.RemoteAddr)
		http.Error(w, "the client did not enable HTTP datagrams (SETTINGS_H3_DATAGRAM), which carry the tunnel's packets", http.StatusBadRequest)
		return
	}
	addrs, err := s.allocate()
	if err != nil {
		done()
		s.exhausted.Add(1)
		s.logRefusal("gateway: refused %s: %v", r.RemoteAddr, err)
		http.Error(w, "no free tunnel address", http.StatusServiceUnavailable)
		return
	}
	release := func() {
		for _, a := range addrs {
			s.pool.Release(a)
		}
		done()
	}
	w.Header().Set(http3.CapsuleProtocolHeader, http3.CapsuleProtocolValue)
	w.WriteHeader(http.StatusOK)
	streamer, ok := w.(http3.HTTPStreamer)
	var st *http3.Stream
	if ok {
		st = streamer.HTTPStream()
	}
	if st == nil {
		release()
		return
	}
	cfg := connectip.ProxyConfig{Config: connectip.Config{MTU: s.cfg.MTU}}
	sess, err := connectip.NewProxy(newCarrier(st, &s.pathTooSmall, s.cfg.MTU), addrs, s.routes, cfg)
	if err != nil {
		release()
		s.logf("gateway: tunnel of %s: %v", r.RemoteAddr, err)
		return
	}
	if err := s.mux.add(&client{sess: sess, addrs: addrs, conn: connOf(r.Context())}, release); err != nil {
		_ = sess.Close()
		release()
	}
}

// allocate takes one address of each IP version of the pool.
func (s *Server) allocate() ([]netip.Prefix, error) {
	var addrs []netip.Prefix
	for _, want := range []struct {
		ok  bool
		any netip.Addr
	}{{s.v4, netip.IPv4Unspecified()}, {s.v6, netip.IPv6Unspecified()}} {
		if !want.ok {
			continue
		}
		p, err := s.pool.Allocate(want.any)
		if err != nil {
			for _, a := range addrs {
				s.pool.Release(a)
			}
			return nil, err
		}
		addrs = append(addrs, p)
	}
	return addrs, nil
}

// logRefusal logs a refused client, at most one a second: a client
// with thousands of sockets must not turn its refusals into as many log
// lines. Stats counts them all.
func (s *Server) logRefusal(format string, args ...any) {
	now := time.Now().Unix()
	last := s.lastRefusalLog.Load()
	if now <= last || !s.lastRefusalLog.CompareAndSwap(last, now) {
		return
	}
	s.logf(format, args...)
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.ErrorLog != nil {
		s.cfg.ErrorLog.Printf(format, args...)
	}
}

// ServerStats are a Server's counters. They marshal to JSON as they are.
type ServerStats struct {
	// Clients is the number of tunnels open now.
	Clients int `json:"clients"`
	// Refused counts requests refused for their credentials,
	// PoolExhausted those refused for want of an address.
	Refused       uint64 `json:"refused"`
	PoolExhausted uint64 `json:"pool_exhausted"`
	// OverClientLimit and OverSourceLimit count requests refused with
	// 429 because their client (credential) or their source already
	// held as many tunnels as ServerConfig allows.
	OverClientLimit uint64 `json:"over_client_limit"`
	OverSourceLimit uint64 `json:"over_source_limit"`
	// NoClient counts packets from the device to an address no client
	// holds, ClientGone those to a client whose tunnel had just ended.
	NoClient   uint64 `json:"no_client"`
	ClientGone uint64 `json:"client_gone"`
	// PathTooSmall counts packets dropped because their datagram did not
	// fit the client's QUIC packets.
	PathTooSmall uint64 `json:"path_too_small"`
	// NoDatagrams counts requests refused with 400 because the client
	// did not enable HTTP datagrams, which carry the tunnel's packets.
	NoDatagrams uint64 `json:"no_datagrams"`
	// Transport sums the QUIC counters of the clients' connections,
	// those that ended included (the RTT is the largest).
	Transport TransportStats `json:"transport"`
	// Sessions sums the counters of every client's CONNECT-IP session,
	// ended ones included: Received.Dropped.SourceNotAllowed counts the
	// spoofed packets dropped.
	Sessions connectip.Stats `json:"sessions"`
	// Tunnel is the device forwarder's counters.
	Tunnel tunnel.Stats `json:"tunnel"`
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() ServerStats {
	clients, transport := s.mux.clientCount()
	if h3 := s.h3.Load(); h3 != nil {
		st := h3.Stats()
		transport.HTTPDatagramsDropped = st.DatagramsUnknown + st.DatagramsDropped
	}
	return ServerStats{
		Clients:         clients,
		Transport:       transport,
		Refused:         s.refused.Load(),
		PoolExhausted:   s.exhausted.Load(),
		OverClientLimit: s.overClient.Load(),
		OverSourceLimit: s.overSource.Load(),
		NoClient:        s.mux.noClient.Load(),
		ClientGone:      s.mux.clientEnd.Load(),
		PathTooSmall:    s.pathTooSmall.Load(),
		NoDatagrams:     s.noDatagrams.Load(),
		Sessions:        s.mux.Stats(),
		Tunnel:          s.fwd.Stats(),
	}
}
