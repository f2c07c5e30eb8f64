// Package quicsim runs satquic's QUIC connections over the network
// simulator (package netsim) in virtual time: the same sans-IO core the
// quic package drives in real time, here fed by netsim's discrete-event
// loop, so that a run is a function of its configuration and seed and a
// long download over a satellite profile takes a fraction of a second.
// Each end is driven by package coresim, with core's one calling protocol
// (Step, the application's turn, NextDatagram, NextTimer), as the real-time
// loop drives it over a socket, ECN codepoints included: the ends mark,
// count and validate ECN over the simulated path as over a real one.
//
// It lives inside the quic tree because the core is internal to it; it
// exposes only what an experiment needs (Download, Requests), not the
// core. DownloadConfig.ZeroRTT times a returning client's download: a
// second connection that resumes the first one's session and sends its
// request in 0-RTT; DownloadConfig.CarefulResume adds Careful Resume from
// the path state the first connection let the server measure (resume.go).
//
// Determinism: the links draw from the profile's seeds, the connection IDs
// and other random values of the core from a source seeded by Seed, and the
// certificate is an Ed25519 one derived from a fixed key, whose signatures
// have a fixed size. The TLS key shares still come from crypto/rand (Go's
// TLS takes no other source), but their sizes are fixed, so every packet
// has the same size and fate from one run to the next.
package quicsim

import (
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/congestion"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/coresim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// ALPN is the application protocol of the simulated download: hq-interop,
// as the real-time benchmark stack speaks it.
const ALPN = "hq-interop"

// DownloadConfig describes one simulated download.
type DownloadConfig struct {
	// Profile is the path, already seeded (netsim.Profile.WithSeed).
	Profile netsim.Profile
	// Seed seeds the connections' own randomness.
	Seed uint64
	// Size is the body size in bytes.
	Size int64
	// CongestionControl is "bbr" (default), "cubic" or "newreno", as in
	// quic.Config.
	CongestionControl string
	// NewCongestionController, if set, makes the server's congestion
	// controller (the server sends the body), as in quic.Config; the
	// client keeps CongestionControl's. CongestionControl must then be
	// empty.
	NewCongestionController func() congestion.Controller
	// MaxDatagramSize is the largest UDP payload both ends send (0: the
	// core's default, 1200).
	MaxDatagramSize int
	// Limit bounds the run in simulated time (0: one hour).
	Limit time.Duration
	// FEC enables forward erasure correction at both ends, with the
	// adaptive controller and FECPolicy ("auto", the default as in
	// quic.FECConfig, "signal" or "hide").
	FEC       bool
	FECPolicy string
	// ZeroRTT makes the timed download a returning client's (resume.go):
	// a first connection over a path of the same profile downloads Size
	// bytes and keeps the server's session ticket and address validation
	// token; the timed connection resumes the session and sends its
	// request in 0-RTT, and the server answers in 0.5-RTT. Elapsed and
	// the statistics are the second connection's.
	ZeroRTT bool
	// CarefulResume adds Careful Resume with the BDP frame (RFC 9959) to
	// a returning client's download (it needs ZeroRTT): the first
	// connection, of WarmUpSize(Profile, Size, true) bytes, lets the server
	// measure the path and hand its sealed state to the client, which
	// returns it in its first 0-RTT packet; the server of the timed
	// connection resumes from it.
	CarefulResume bool
	// NoAckFrequency turns off the ACK frequency extension
	// (draft-ietf-quic-ack-frequency), which both ends offer by default as
	// quic.Config does: the server then asks the client for fewer ACKs on
	// large windows.
	NoAckFrequency bool
}

// Result is the outcome of a simulated download.
type Result struct {
	// Elapsed runs in simulated time from the client's first packet to
	// the last byte of the body arriving at the client.
	Elapsed time.Duration
	// Handshake is when the client's handshake completed.
	Handshake time.Duration
	// Bytes is the size of the body received.
	Bytes int64
	// Up and Down are what the links did (client to server and back).
	Up, Down netsim.LinkStats
	// ServerPacketsLost and ServerPTOs are the sender's loss recovery
	// counters.
	ServerPacketsLost, ServerPTOs uint64
	// ServerRetransmitted counts the server's packets whose content was
	// sent again, ServerSpurious those among them the client had
	// (acknowledged late, or rebuilt by FEC).
	ServerRetransmitted, ServerSpurious uint64
	// FEC is the server's FEC counters, and ClientRecovered the packets
	// the client rebuilt.
	FEC             core.FECStats
	ClientRecovered uint64
	// ServerRecovery is the server's loss recovery counters: among them
	// how its FEC policy counted the packets the client rebuilt.
	ServerRecovery recovery.Stats
	// CarefulResume is the server's Careful Resume state and counters
	// (the phase reached, the state it resumed from).
	CarefulResume core.CarefulResumeStats
	// AckFrequency is the server's side of the ACK frequency extension:
	// what it asked the client for, and how often.
	AckFrequency core.AckFrequencyStats
}

// UplinkRatio is the bytes the client offered its uplink (its ACKs and
// its request) per byte the server offered the downlink: what the
// download costs a thin return link.
func (r *Result) UplinkRatio() float64 {
	if r.Down.OfferedBytes == 0 {
		return 0
	}
	return float64(r.Up.OfferedBytes) / float64(r.Down.OfferedBytes)
}

var (
	clientAddr = netip.MustParseAddrPort("10.0.0.1:40000")
	serverAddr = netip.MustParseAddrPort("10.0.0.2:443")
)

// Download runs one hq-interop download: the client opens a bidirectional
// stream once its handshake completed and sends "GET /<size>\r\n" and a
// FIN; the server answers with size generated bytes and a FIN. It fails
// when the connection closes, the network goes idle or Limit passes first.
func Download(cfg DownloadConfig) (Result, error) {
	if cfg.Size < 0 {
		return Result{}, fmt.Errorf("quicsim: negative size %d", cfg.Size)
	}
	ccfg, scfg, err := configs(cfg)
	if err != nil {
		return Result{}, err
	}
	var epoch time.Duration // of the timed run on the server's clocks
	if cfg.ZeroRTT {
		if epoch, err = warmUp(cfg, ccfg, scfg); err != nil {
			return Result{}, err
		}
		scfg = atEpoch(scfg, epoch)
	}
	return download(cfg, ccfg, scfg, epoch)
}

// download runs the timed download, its address validator's clock at
// epoch.
func download(cfg DownloadConfig, ccfg, scfg *core.Config, epoch time.Duration) (Result, error) {
	w, err := newWorld(cfg, ccfg, scfg, epoch)
	if err != nil {
		return Result{}, err
	}
	cconn, sv, n := w.cconn, w.sv, w.n
	cl := &client{endpoint: coresim.NewClient(cconn), conn: cconn, size: cfg.Size, buf: make([]byte, 64<<10), early: cfg.ZeroRTT}
	cl.App = cl.step
	runErr := w.run(cl, func() bool { return cl.done || cl.err != nil || sv.err != nil })
	up, down := w.path.Stats()
	res := Result{Elapsed: cl.doneAt, Handshake: cl.handshakeAt, Bytes: cl.got, Up: up, Down: down}
	if sv.conn != nil {
		st := sv.conn.Stats()
		res.ServerPacketsLost, res.ServerPTOs = st.PacketsLost, st.Recovery.PTOs
		res.ServerRetransmitted, res.ServerSpurious = st.PacketsRetransmitted, st.SpuriousRetransmissions
		res.FEC = st.FEC
		res.ServerRecovery = st.Recovery
		res.CarefulResume = st.CarefulResume
		res.AckFrequency = st.AckFrequency
	}
	res.ClientRecovered = cconn.Stats().FEC.SymbolsRecovered
	switch {
	case cl.err != nil:
		return res, cl.err
	case sv.err != nil:
		return res, sv.err
	case runErr != nil:
		return res, fmt.Errorf("quicsim: after %d of %d bytes at %v: %w (client: %v)", cl.got, cfg.Size, n.Now(), runErr, cconn.Err())
	case cl.got != cfg.Size:
		return res, fmt.Errorf("quicsim: received %d bytes, want %d", cl.got, cfg.Size)
	}
	return res, nil
}

// world is one simulated path with a client connection and a server that
// creates its connection from the client's first datagram.
type world struct {
	n     *netsim.Network
	path  *netsim.Path
	cconn *core.Conn
	sv    *server
	limit time.Duration
}

// newWorld builds the path and both ends of cfg, with the connection
// configurations ccfg and scfg; the server's address validator, if any,
// has its clock at epoch.
func newWorld(cfg DownloadConfig, ccfg, scfg *core.Config, epoch time.Duration) (*world, error) {
	var err error
	w := &world{n: netsim.NewNetwork(netsim.NetworkConfig{Seed: cfg.Seed}), limit: cfg.Limit}
	if w.limit <= 0 {
		w.limit = time.Hour
	}
	if w.path, err = w.n.AddProfilePath(clientAddr.Addr(), serverAddr.Addr(), cfg.Profile); err != nil {
		return nil, fmt.Errorf("quicsim: %w", err)
	}
	if w.cconn, err = core.NewClientConn(ccfg, 0, serverAddr); err != nil {
		return nil, fmt.Errorf("quicsim: client: %w", err)
	}
	w.sv = &server{cfg: scfg, epoch: epoch}
	w.sv.endpoint = coresim.NewServer(w.sv.accept)
	w.sv.App = w.sv.step
	return w, nil
}

// run attaches the server and the client application cl, which drives
// w.cconn, and runs the network until done or the limit.
func (w *world) run(cl netsim.Endpoint, done func() bool) error {
	if err := w.n.Attach(serverAddr, w.sv); err != nil {
		return err
	}
	if err := w.n.Attach(clientAddr, cl); err != nil {
		return err
	}
	return w.n.RunUntil(done, w.limit)
}

func configs(cfg DownloadConfig) (client, server *core.Config, err error) {
	var rc recovery.Config
	switch cfg.CongestionControl {
	case "cubic":
		rc.Algorithm = recovery.CUBIC
	case "newreno":
		rc.Algorithm = recovery.NewReno
	case "", "bbr":
		rc.Algorithm = recovery.BBR
	default:
		return nil, nil, fmt.Errorf("quicsim: unknown congestion controller %q", cfg.CongestionControl)
	}
	var fecCfg *core.FECConfig
	if cfg.FEC {
		fecCfg = &core.FECConfig{}
		switch cfg.FECPolicy {
		case "", "auto":
			rc.FECPolicy = recovery.FECAuto
		case "signal":
			rc.FECPolicy = recovery.FECSignal
		case "hide":
			rc.FECPolicy = recovery.FECHide
		default:
			return nil, nil, fmt.Errorf("quicsim: unknown FEC policy %q", cfg.FECPolicy)
		}
	} else if cfg.FECPolicy != "" {
		return nil, nil, fmt.Errorf("quicsim: FEC policy %q without FEC", cfg.FECPolicy)
	}
	srv, err := serverRecovery(rc, cfg)
	if err != nil {
		return nil, nil, err
	}
	cert, pool, err := certificate()
	if err != nil {
		return nil, nil, err
	}
	client = &core.Config{
		TLS:             &tls.Config{RootCAs: pool, ServerName: serverName, NextProtos: []string{ALPN}, MinVersion: tls.VersionTLS13},
		Rand:            seeded(cfg.Seed, 1),
		MaxDatagramSize: cfg.MaxDatagramSize,
		Recovery:        rc,
		FEC:             fecCfg,
	}
	server = &core.Config{
		TLS:             &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{ALPN}, MinVersion: tls.VersionTLS13, SessionTicketsDisabled: true},
		Rand:            seeded(cfg.Seed, 2),
		MaxDatagramSize: cfg.MaxDatagramSize,
		Recovery:        srv,
		FEC:             fecCfg,
	}
	if !cfg.NoAckFrequency {
		client.AckFrequency, server.AckFrequency = &core.AckFrequencyConfig{}, &core.AckFrequencyConfig{}
	}
	if cfg.ZeroRTT {
		if err := resumable(cfg.Seed, client, server); err != nil {
			return nil, nil, err
		}
	}
	if cfg.CarefulResume {
		if err := carefulResume(cfg, client, server); err != nil {
			return nil, nil, err
		}
	}
	for _, c := range []*core.Config{client, server} {
		if err := c.Check(); err != nil {
			return nil, nil, fmt.Errorf("quicsim: %w", err)
		}
	}
	return client, server, nil
}

// serverRecovery is the server's loss recovery configuration: the
// client's, with the custom controller if cfg has one.
func serverRecovery(rc recovery.Config, cfg DownloadConfig) (recovery.Config, error) {
	if cfg.NewCongestionController == nil {
		return rc, nil
	}
	if cfg.CongestionControl != "" {
		return rc, fmt.Errorf("quicsim: CongestionControl %q and NewCongestionController both set", cfg.CongestionControl)
	}
	rc.Algorithm, rc.Custom = recovery.Custom, &recovery.CustomController{New: cfg.NewCongestionController}
	return rc, nil
}

// seeded is a deterministic byte source for one end of the connection.
func seeded(seed, end uint64) io.Reader {
	var key [32]byte
	r := rand.New(rand.NewPCG(seed, end))
	for i := range key {
		key[i] = byte(r.Uint32())
	}
	return rand.NewChaCha8(key)
}

const serverName = "sim.satquic.test"

var (
	certOnce sync.Once
	simCert  tls.Certificate
	simPool  *x509.CertPool
	certErr  error
)

// certificate is a self-signed Ed25519 certificate from a fixed key,
// valid from 2000 to 2100 so that no clock decides whether it verifies.
func certificate() (tls.Certificate, *x509.CertPool, error) {
	certOnce.Do(func() {
		key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
		tmpl := &x509.Certificate{
			SerialNumber:          big.NewInt(1),
			Subject:               pkix.Name{CommonName: serverName},
			DNSNames:              []string{serverName},
			NotBefore:             time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
			NotAfter:              time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
			KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
			ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
		der, err := x509.CreateCertificate(nil, tmpl, tmpl, key.Public(), key)
		if err != nil {
			certErr = fmt.Errorf("quicsim: certificate: %w", err)
			return
		}
		leaf, err := x509.ParseCertificate(der)
		if err != nil {
			certErr = fmt.Errorf("quicsim: certificate: %w", err)
			return
		}
		simPool = x509.NewCertPool()
		simPool.AddCert(leaf)
		simCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	})
	return simCert, simPool, certErr
}

// endpoint runs a connection over the simulator: coresim's, the one way a
// core.Conn is driven over netsim.
type endpoint = coresim.Endpoint[*core.Conn, core.Event]

// client sends the request once the handshake completed and reads the
// response to its end.
type client struct {
	*endpoint
	conn        *core.Conn
	size        int64
	buf         []byte
	stream      uint64
	requested   bool
	handshakeAt time.Duration
	got         int64
	done        bool
	doneAt      time.Duration
	err         error
	// early sends the request as soon as a stream opens: in 0-RTT when
	// the session allows it.
	early bool
}

func (c *client) step(now time.Duration, events []core.Event) {
	for _, ev := range events {
		switch ev.Kind {
		case core.EventHandshakeComplete:
			c.handshakeAt = now
		case core.EventClosed:
			if !c.done {
				c.err = fmt.Errorf("quicsim: client connection closed after %d of %d bytes: %v", c.got, c.size, ev.Err)
			}
		}
	}
	if c.err != nil || c.done || (!c.early && !c.conn.HandshakeComplete()) {
		return
	}
	if !c.requested {
		id, err := c.conn.OpenStream(now, true)
		if errors.Is(err, core.ErrHandshakeIncomplete) && c.early {
			return // no 0-RTT: the request waits for the handshake
		}
		if err != nil {
			c.err = fmt.Errorf("quicsim: opening the request stream: %w", err)
			return
		}
		req := "GET /" + strconv.FormatInt(c.size, 10) + "\r\n"
		// A stream's send buffer takes a short request whole.
		if n, err := c.conn.StreamWrite(id, []byte(req)); err != nil || n != len(req) {
			c.err = fmt.Errorf("quicsim: writing the request: %d of %d bytes, %v", n, len(req), err)
			return
		}
		if err := c.conn.CloseWrite(id); err != nil {
			c.err = fmt.Errorf("quicsim: ending the request: %w", err)
			return
		}
		c.stream, c.requested = id, true
	}
	for {
		n, err := c.conn.StreamRead(now, c.stream, c.buf)
		c.got += int64(n)
		if err == io.EOF {
			c.done, c.doneAt = true, now
			c.conn.Close(now, 0, "")
			return
		}
		if err != nil {
			c.err = fmt.Errorf("quicsim: reading the response after %d bytes: %w", c.got, err)
			return
		}
		if n == 0 {
			return
		}
	}
}

// server creates its connection from the client's first datagram, as a
// listener would, reads each request and writes its body as fast as the
// connection takes it. Requests on several streams are served in turn.
type server struct {
	*endpoint
	conn      *core.Conn // nil until the client's first Initial
	cfg       *core.Config
	epoch     time.Duration // of the address validator's clock
	exchanges map[uint64]*exchange
	order     []uint64 // streams with work left, oldest first
	err       error
}

// exchange is one request and its response.
type exchange struct {
	stream   uint64
	req      []byte
	reqDone  bool
	size     int64 // body bytes asked for
	left     int64 // body bytes still to write
	finished bool  // FIN queued
}

// accept creates the server's connection from a client's first Initial.
func (s *server) accept(now time.Duration, d core.Datagram) (*core.Conn, bool) {
	info, err := core.PeekInitial(d.Data)
	if err != nil {
		return nil, false
	}
	params := core.ServerParams{RemoteAddr: d.Addr, OriginalDestConnID: info.DstConnID}
	if v := s.cfg.AddressValidator; v != nil {
		// A NEW_TOKEN token from the client's last connection proves
		// its address (RFC 9000 section 8.1.3).
		if params, err = v.Check(info, d.Addr, s.epoch+now); err != nil {
			return nil, false
		}
	}
	s.conn, err = core.NewServerConn(s.cfg, now, params)
	if err != nil {
		s.err = fmt.Errorf("quicsim: server: %w", err)
		return nil, false
	}
	return s.conn, true
}

// body is the block the server repeats: random bytes, as the real-time
// byte servers send.
var body = func() []byte {
	b := make([]byte, 64<<10)
	r := rand.New(rand.NewPCG(0x5a7c, 0x0b17))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

func (s *server) step(now time.Duration, events []core.Event) {
	for _, ev := range events {
		if ev.Kind == core.EventStreamOpened && ev.Bidi {
			if s.exchanges == nil {
				s.exchanges = make(map[uint64]*exchange)
			}
			if _, ok := s.exchanges[ev.StreamID]; !ok {
				s.exchanges[ev.StreamID] = &exchange{stream: ev.StreamID}
				s.order = append(s.order, ev.StreamID)
			}
		}
	}
	if s.err != nil {
		return
	}
	keep := s.order[:0]
	for _, id := range s.order {
		x := s.exchanges[id]
		if err := s.serve(now, x); err != nil {
			s.err = err
			return
		}
		if x.finished {
			delete(s.exchanges, id)
			continue
		}
		keep = append(keep, id)
	}
	s.order = keep
}

// serve moves one exchange on at now as far as the connection allows.
func (s *server) serve(now time.Duration, x *exchange) error {
	if !x.reqDone {
		var buf [512]byte
		for {
			n, err := s.conn.StreamRead(now, x.stream, buf[:])
			x.req = append(x.req, buf[:n]...)
			if len(x.req) > 8<<10 {
				return errors.New("quicsim: server: request too long")
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("quicsim: server: reading the request: %w", err)
			}
			if n == 0 {
				return nil // the rest of the request has yet to arrive
			}
		}
		line := strings.TrimRight(string(x.req), "\r\n")
		size, err := strconv.ParseInt(strings.TrimPrefix(line, "GET /"), 10, 64)
		if err != nil || !strings.HasPrefix(line, "GET /") || size < 0 {
			return fmt.Errorf("quicsim: server: bad request %q", line)
		}
		x.reqDone, x.size, x.left = true, size, size
	}
	for x.left > 0 {
		// The body is the block repeated: resume where the last short
		// write stopped.
		off := int((x.size - x.left) % int64(len(body)))
		k := off + int(min(x.left, int64(len(body)-off)))
		n, err := s.conn.StreamWrite(x.stream, body[off:k])
		if err != nil {
			return fmt.Errorf("quicsim: server: writing the body: %w", err)
		}
		x.left -= int64(n)
		if n < k-off {
			return nil // the send buffer is full; more on the next poll
		}
	}
	if err := s.conn.CloseWrite(x.stream); err != nil {
		return fmt.Errorf("quicsim: server: ending the body: %w", err)
	}
	x.finished = true
	return nil
}
