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
	"github.com/satquic/satquic/tunnel"
)

// ServerConfig configures a Server.
type ServerConfig struct {
	// Token, if set, admits a client whose request carries it as a
	// bearer token (connectip.CheckToken).
	Token string
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
	// QUIC path is dropped and counted (Stats.PathTooSmall).
	MTU int
	// QueueLen is the forwarder's device queue (tunnel.Config).
	QueueLen int
	// ErrorLog receives the reasons clients were refused (at most one
	// refusal a second; Stats counts them all); nil discards
	// them.
	ErrorLog *log.Logger
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

	h3        atomic.Pointer[http3.Server] // once Serve runs
	refused   atomic.Uint64
	exhausted atomic.Uint64
	// lastRefusalLog is the Unix second of the last refusal logged.
	lastRefusalLog atomic.Int64
	pathTooSmall   atomic.Uint64
}

// NewServer returns a Server whose clients' packets go through dev.
func NewServer(dev tunnel.Device, cfg ServerConfig) (*Server, error) {
	if cfg.Token == "" && !cfg.ClientCertificates {
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
	s := &Server{cfg: cfg, dev: dev, pool: pool}
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
	if status, why := s.admit(r); status != 0 {
		s.refused.Add(1)
		s.logRefusal("gateway: refused %s: %s", r.RemoteAddr, why)
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", "Bearer")
		}
		http.Error(w, why, status)
		return
	}
	s.open(w, r)
}

// admit returns 0 for a client the configuration admits, otherwise the
// status to refuse it with and why.
func (s *Server) admit(r *http.Request) (int, string) {
	if s.cfg.Token != "" && connectip.CheckToken(r, s.cfg.Token) {
		return 0, ""
	}
	if s.cfg.ClientCertificates {
		if _, ok := connectip.ClientCertificate(r); ok {
			return 0, ""
		}
	}
	if r.Header.Get("Authorization") == "" {
		return http.StatusUnauthorized, "no credentials: a bearer token or a client certificate is needed"
	}
	return http.StatusForbidden, "credentials not accepted"
}

// open assigns the client its addresses and runs its session.
func (s *Server) open(w http.ResponseWriter, r *http.Request) {
	addrs, err := s.allocate()
	if err != nil {
		s.exhausted.Add(1)
		s.logRefusal("gateway: refused %s: %v", r.RemoteAddr, err)
		http.Error(w, "no free tunnel address", http.StatusServiceUnavailable)
		return
	}
	release := func() {
		for _, a := range addrs {
			s.pool.Release(a)
		}
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
	sess, err := connectip.NewProxy(carrier{Stream: st, tooLarge: &s.pathTooSmall}, addrs, s.routes, cfg)
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
	// NoClient counts packets from the device to an address no client
	// holds, ClientGone those to a client whose tunnel had just ended.
	NoClient   uint64 `json:"no_client"`
	ClientGone uint64 `json:"client_gone"`
	// PathTooSmall counts packets dropped because their datagram did not
	// fit the client's QUIC packets.
	PathTooSmall uint64 `json:"path_too_small"`
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
		Clients:       clients,
		Transport:     transport,
		Refused:       s.refused.Load(),
		PoolExhausted: s.exhausted.Load(),
		NoClient:      s.mux.noClient.Load(),
		ClientGone:    s.mux.clientEnd.Load(),
		PathTooSmall:  s.pathTooSmall.Load(),
		Sessions:      s.mux.Stats(),
		Tunnel:        s.fwd.Stats(),
	}
}
