package quic

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/congestion"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Version is a QUIC version.
type Version uint32

// The QUIC versions satquic speaks.
const (
	Version1 Version = Version(wire.Version1) // RFC 9000
	Version2 Version = Version(wire.Version2) // RFC 9369
)

func (v Version) String() string { return wire.Version(v).String() }

// Congestion controllers for Config.CongestionControl.
const (
	CUBIC   = "cubic"   // RFC 9438
	NewReno = "newreno" // RFC 9002 section 7
	BBR     = "bbr"     // BBRv3, draft-ietf-ccwg-bbr, the default
	// DefaultCongestionControl is the controller of a zero
	// Config.CongestionControl: BBR, whose model of the path does not
	// slow down for random loss below 2%, so that a peer without FEC
	// still gets the path's rate on a lossy satellite link; with FEC and
	// on clean paths it is as fast as CUBIC (README, "Congestion
	// control").
	DefaultCongestionControl = BBR
)

// Config configures connections. A nil Config, or a zero field, selects
// the default, which suits a satellite path: a congestion window, send
// buffers and receive windows that grow to 160 MiB (256 MiB for the
// connection's receive window), twice what a 1 Gbit/s x 650 ms path holds
// (81.25 MB), and timeouts that a 600 ms round trip does not trip. The
// windows grow by auto-tuning and memory follows the data in flight, so a
// small transfer costs no more for the large limits.
// Every constant that derives from time is a field, so that a path whose
// round trip is known (a GEO link) can say so.
type Config struct {
	// Version is the QUIC version a client offers: Version1 (default) or
	// Version2. A server accepts both.
	Version Version

	// InitialRTT is the round trip assumed before the first sample
	// (default 333 ms, RFC 9002 section 6.2.2). A GEO path starts faster
	// with its real value, about 600 ms: fewer spurious probes.
	InitialRTT time.Duration
	// HandshakeTimeout bounds the handshake (default 20 s).
	HandshakeTimeout time.Duration
	// MaxIdleTimeout closes a connection when nothing arrived for that
	// long (default 30 s). The effective timeout is the smaller of both
	// endpoints' and at least three probe timeouts.
	MaxIdleTimeout time.Duration
	// MaxAckDelay is how long this endpoint may delay an ACK (default
	// 25 ms).
	MaxAckDelay time.Duration
	// AckElicitingThreshold is how many ack-eliciting packets arrive
	// before an ACK goes out at once (default 2). Raising it saves a thin
	// return link (asymmetric satellite links).
	AckElicitingThreshold int
	// KeepAlivePeriod, if set, sends a PING after that long without
	// traffic, so that an idle connection and its NAT bindings stay up.
	KeepAlivePeriod time.Duration

	// InitialStreamReceiveWindow and MaxStreamReceiveWindow bound a
	// stream's receive window (defaults 512 KiB and 160 MiB; a client's
	// initial window is 64 MiB, so that a server on a long path can send
	// a bandwidth-delay product in its second round trip); it grows
	// from the first toward the second when the application reads
	// faster than a window lasts a round trip (auto-tuning).
	InitialStreamReceiveWindow uint64
	MaxStreamReceiveWindow     uint64
	// InitialConnectionReceiveWindow and MaxConnectionReceiveWindow do the
	// same for the connection (defaults 768 KiB and 256 MiB; 128 MiB
	// initially for a client).
	InitialConnectionReceiveWindow uint64
	MaxConnectionReceiveWindow     uint64
	// MaxIncomingStreams and MaxIncomingUniStreams are how many streams
	// of each type the peer may have open at once (default 100 each).
	MaxIncomingStreams    uint64
	MaxIncomingUniStreams uint64

	// MaxDatagramSize is the largest UDP payload sent (default 1200, the
	// size every QUIC path carries; the peer's max_udp_payload_size lowers
	// it) until path MTU discovery finds that the path carries more.
	MaxDatagramSize int
	// MaxProbeDatagramSize is the largest UDP payload path MTU discovery
	// tries (default 1452: a 1500-byte Ethernet MTU under IPv6 and UDP
	// headers), within the peer's max_udp_payload_size.
	MaxProbeDatagramSize int
	// DisablePathMTUDiscovery keeps MaxDatagramSize for the whole
	// connection.
	DisablePathMTUDiscovery bool
	// CongestionControl chooses a built-in congestion controller: BBR
	// (the default, DefaultCongestionControl), CUBIC or NewReno.
	CongestionControl string
	// NewCongestionController, if set, makes the congestion controller of
	// each connection instead: an application's own (package
	// quic/congestion says what it is told and what the connection
	// guarantees whatever it answers). It is called once per connection
	// and must return a new controller each time. CongestionControl must
	// then be empty, as the two would choose different controllers.
	NewCongestionController func() congestion.Controller
	// MaxCongestionWindow caps the congestion window (default 160 MiB,
	// twice the 81.25 MB bandwidth-delay product of 1 Gbit/s x 650 ms).
	MaxCongestionWindow int
	// DisablePacing sends at once whatever the window allows.
	DisablePacing bool
	// DisableLongRTTSlowStart keeps RFC 9002's slow start on paths with a
	// minimum RTT of 80 ms or more, where by default the first slow start
	// grows by min(RTT/50 ms, 6)+1 per round trip (threefold at 100 ms,
	// sevenfold on GEO) and ends at the bottleneck rate it measures.
	DisableLongRTTSlowStart bool
	// DisableECN sends every datagram Not-ECT and neither counts nor
	// reports the codepoints of received ones. ECN is otherwise on where
	// the socket reads and sets codepoints (Linux UDP sockets): the
	// connection tests the path with its first datagrams, checks the
	// peer's ECN counts, turns marking off on a path that clears or drops
	// marks, and slows down on CE marks as on loss, without the loss
	// (RFC 9000 section 13.4).
	DisableECN bool
	// DisableActiveMigration tells the peer not to move its connections
	// to another local address (disable_active_migration, RFC 9000
	// section 18.2); a server sets it when its address is only reachable
	// through something that pins the client's (a load balancer keyed on
	// addresses). NAT rebindings are followed all the same: the peer
	// cannot know of them. A client whose server set it refuses Migrate.
	DisableActiveMigration bool
	// FEC, if set, enables forward erasure correction when the peer
	// enables it too (see FECConfig).
	FEC *FECConfig
	// DisableCarefulResume turns off Careful Resume with the BDP frame
	// (RFC 9959), which is on by default and used when both endpoints
	// offer it (a transport parameter; other stacks see nothing; a
	// client offers it when its tls.Config has a ClientSessionCache). A
	// server hands its client the path state it measured (bytes per
	// round trip and minimum RTT), sealed so that the client can neither
	// read nor alter it; the client keeps it with its session ticket (in
	// its tls.Config's ClientSessionCache) and returns it on its next
	// connection, in 0-RTT when it may; the server then starts from that
	// state instead of the initial window, and retreats safely if the
	// path no longer carries it. A state is valid for an hour from the
	// client's address (its /64 for IPv6). A returned state that is
	// forged, altered, expired or from another address is ignored and
	// counted (ConnectionStats.CarefulResume).
	DisableCarefulResume bool
	// DisableAckFrequency turns off the ACK frequency extension
	// (draft-ietf-quic-ack-frequency), which is on by default and used
	// with peers that offer it too (the min_ack_delay transport
	// parameter; quinn, msquic and others do). This endpoint then
	// acknowledges as its peer asks, and, as a sender on a long path,
	// asks the peer for fewer ACKs once slow start ends: one per 1/128 of
	// the congestion window (at most 256 packets), within an eighth of
	// the RTT, with IMMEDIATE_ACK on probes and at the end of a transfer,
	// so that a thin satellite return link is not filled with ACKs
	// (ConnectionStats.AckFrequency).
	DisableAckFrequency bool
	// ResumeKey, on a server, seals the path states of Careful Resume.
	// Servers of a farm share one key, so that a client resumes with any
	// of them. Nil: a random key drawn for each Listener, so that states
	// hold only while it runs.
	ResumeKey *ResumeKey

	// EnableDatagrams offers DATAGRAM frames (RFC 9221) to the peer in the
	// max_datagram_frame_size transport parameter; SendDatagram and
	// ReceiveDatagram work when the peer offers them too
	// (ConnectionState().SupportsDatagrams).
	EnableDatagrams bool
	// DatagramSendQueue and DatagramReceiveQueue bound the datagrams
	// waiting to be sent and to be read (default 256 each). A full send
	// queue drops its oldest datagram, a full receive queue the one that
	// arrives (see SendDatagram).
	DatagramSendQueue, DatagramReceiveQueue int

	// Versions are the QUIC versions this endpoint accepts, by preference
	// (RFC 9368). A client starts with Version (or else the first of
	// Versions) and, told by a Version Negotiation packet that the server
	// speaks none of it, starts again with the first of Versions the
	// server lists. A server answers other versions with Version
	// Negotiation and moves a client that lists a version it prefers to
	// that one (compatible version negotiation). Nil: every version
	// satquic speaks, and a server keeps the client's.
	Versions []Version

	// Allow0RTT lets a server accept 0-RTT data from clients that resume
	// a session, and issue session tickets that allow it (RFC 9001
	// section 4.6). 0-RTT data has no protection against replay (RFC
	// 9001 section 9.2): an attacker can send a client's first flight
	// again, and the server reads the copy's 0-RTT data as a new
	// connection's, though that connection's handshake never completes.
	// So it is off: enable it where the requests that can come early
	// are safe to repeat, and hold any other until the connection's
	// HandshakeComplete is closed (ListenEarly explains it). A client
	// sends 0-RTT data when it dials with DialEarly and its tls.Config's
	// ClientSessionCache holds a ticket that allows it. With Listen,
	// Accept returns a connection only once its handshake completed; its
	// 0-RTT data is then answered a round trip late: use ListenEarly.
	Allow0RTT bool
	// ResumeRTT starts a resumed client connection from the smoothed RTT
	// of the connection that gave its session ticket, instead of
	// InitialRTT (RFC 9002 section 6.2.2): on a GEO path, the first
	// flight's probes and pacing follow the real round trip.
	ResumeRTT bool
	// TokenStore, on a client, keeps the address validation tokens
	// servers give in NEW_TOKEN frames and hands one to the next
	// connection to the same server, which then skips a Retry and the
	// server's amplification limit (RFC 9000 section 8.1.3). Nil keeps
	// none. NewTokenCache makes one in memory.
	TokenStore TokenStore
	// RequireAddressValidation, on a server, is asked about every client
	// that opens a connection without a valid token: true answers it
	// with a Retry packet, so that the connection starts only once the
	// client proved it receives at its address (RFC 9000 section 8.1.2),
	// at the cost of a round trip. Nil asks it of nobody, until too
	// many handshakes with unvalidated clients are in progress at once.
	// It runs on the Transport's reading goroutine: it must not block.
	RequireAddressValidation func(net.Addr) bool

	// MaxHandshakes, MaxHandshakesPerIP, MaxConnections and
	// MaxConnectionsPerIP bound, on a server, what clients can make it
	// hold; zero selects the default (DefaultMaxHandshakes and the
	// others: 1024, 32, 4096, 512). A source is an IPv4 address or an
	// IPv6 /64 prefix, whatever its ports: a client with many sockets is
	// one source. A client beyond a limit is refused with an Initial
	// carrying CONNECTION_REFUSED (RFC 9000 section 5.2.2).
	//
	// MaxHandshakes bounds the handshakes in progress, whether or not a
	// token proved the client's address. When they are all taken, a new
	// client replaces the handshake silent the longest, if it was silent
	// for a probe timeout (3 InitialRTTs) or more; that one gets a
	// CONNECTION_CLOSE.
	MaxHandshakes int
	// MaxHandshakesPerIP bounds the handshakes of one source, counted
	// apart among clients with and without a valid token: beyond it, a
	// client with a token is refused, and one without gets a Retry, so
	// that Initials with a forged source address cannot take a real
	// client's places.
	MaxHandshakesPerIP int
	// MaxConnections bounds every connection the server holds,
	// handshakes included, accepted or not. When it is reached, a new
	// client replaces a silent handshake as above, or else a connection
	// that received nothing for half of MaxIdleTimeout or more, which
	// ends as an idle timeout would: without a packet (RFC 9000 section
	// 10.1), with an *IdleTimeoutError. A client that sends keep-alives
	// more often than that is never closed this way.
	MaxConnections int
	// MaxConnectionsPerIP bounds the connections of one source,
	// handshakes included.
	MaxConnectionsPerIP int
	// MaxUnvalidatedHandshakes bounds the handshakes in progress with
	// clients whose address no token proved, which may be forged (RFC
	// 9000 section 8.1): beyond it, such clients get a Retry, which
	// costs the server no state, and come back with its token at the
	// cost of a round trip. Zero selects
	// DefaultMaxUnvalidatedHandshakes (128).
	MaxUnvalidatedHandshakes int

	// KeyUpdateInterval, if set, updates the 1-RTT keys after this many
	// packets sent with one key (RFC 9001 section 6), which exercises a
	// peer's key update; otherwise keys change only before the AEAD
	// limits.
	KeyUpdateInterval uint64

	// Tracer, if set, opens the qlog of each connection: it is called as
	// the connection starts and returns the writer of its qlog in JSON-SEQ
	// (nil: none), which is closed when the connection ends. It takes
	// precedence over QlogDir.
	Tracer func(TraceInfo) io.WriteCloser
	// QlogDir, if set, writes the qlog of each connection to a file of its
	// own in that directory, named <odcid>_<client|server>.sqlog after the
	// connection's original Destination Connection ID in hex, as the QUIC
	// interop runner expects. Empty: the QLOGDIR environment variable,
	// if set.
	QlogDir string
}

// TraceInfo names the connection a qlog is opened for.
type TraceInfo struct {
	// IsClient is the role of this endpoint.
	IsClient bool
	// OriginalDestConnID is the Destination Connection ID of the
	// client's first Initial packet, which names the connection in both
	// endpoints' qlogs (after a Retry too).
	OriginalDestConnID []byte
}

// errConfig reports an invalid Config.
var errConfig = errors.New("quic: invalid config")

// coreConfig maps the Config onto the connection core's, which fills in
// the defaults and checks the ranges.
func (c *Config) coreConfig(tlsConf *tls.Config) (core.Config, error) {
	if tlsConf == nil {
		return core.Config{}, fmt.Errorf("%w: nil tls.Config", errConfig)
	}
	if len(tlsConf.NextProtos) == 0 {
		// RFC 9001 section 8.1: QUIC requires ALPN.
		return core.Config{}, fmt.Errorf("%w: tls.Config names no application protocol (NextProtos)", errConfig)
	}
	if c == nil {
		c = &Config{}
	}
	alg, custom, err := c.congestionController()
	if err != nil {
		return core.Config{}, err
	}
	fecCfg, fecPolicy, err := c.FEC.coreFEC()
	if err != nil {
		return core.Config{}, err
	}
	cc := core.Config{
		TLS:                        tlsConf,
		Version:                    wire.Version(c.Version),
		Versions:                   coreVersions(c.Versions),
		MaxDatagramSize:            c.MaxDatagramSize,
		MaxProbeDatagramSize:       c.MaxProbeDatagramSize,
		DisablePathMTUDiscovery:    c.DisablePathMTUDiscovery,
		MaxReceiveDatagramSize:     maxPacketSize,
		HandshakeTimeout:           c.HandshakeTimeout,
		IdleTimeout:                c.MaxIdleTimeout,
		MaxAckDelay:                c.MaxAckDelay,
		AckElicitingThreshold:      c.AckElicitingThreshold,
		KeepAlivePeriod:            c.KeepAlivePeriod,
		InitialStreamReceiveWindow: c.InitialStreamReceiveWindow,
		MaxStreamReceiveWindow:     c.MaxStreamReceiveWindow,
		InitialConnReceiveWindow:   c.InitialConnectionReceiveWindow,
		MaxConnReceiveWindow:       c.MaxConnectionReceiveWindow,
		MaxIncomingStreamsBidi:     c.MaxIncomingStreams,
		MaxIncomingStreamsUni:      c.MaxIncomingUniStreams,
		TokenStore:                 c.TokenStore,
		ResumeRTT:                  c.ResumeRTT,
		KeyUpdateInterval:          c.KeyUpdateInterval,
		Recovery: recovery.Config{
			InitialRTT: c.InitialRTT,
			Algorithm:  alg,
			Custom:     custom,
			MaxWindow:  c.MaxCongestionWindow,
			Pacing:     recovery.PacingConfig{Disabled: c.DisablePacing},
			LongRTT:    recovery.LongRTTConfig{Disabled: c.DisableLongRTTSlowStart},
			FECPolicy:  fecPolicy,
		},
		DisableECN:             c.DisableECN,
		DisableActiveMigration: c.DisableActiveMigration,
		FEC:                    fecCfg,
		CarefulResume:          c.carefulResume(),

		EnableDatagrams:      c.EnableDatagrams,
		DatagramSendQueue:    c.DatagramSendQueue,
		DatagramReceiveQueue: c.DatagramReceiveQueue,
		AckFrequency:         c.ackFrequency(),
	}
	if cc.Version == 0 && len(cc.Versions) > 0 {
		cc.Version = cc.Versions[0]
	}
	windowsFollowMax(&cc)
	if cc.MaxDatagramSize > maxPacketSize {
		return core.Config{}, fmt.Errorf("%w: MaxDatagramSize %d above %d", errConfig, cc.MaxDatagramSize, maxPacketSize)
	}
	if cc.MaxProbeDatagramSize > maxPacketSize {
		return core.Config{}, fmt.Errorf("%w: MaxProbeDatagramSize %d above %d", errConfig, cc.MaxProbeDatagramSize, maxPacketSize)
	}
	if err := cc.Check(); err != nil {
		return core.Config{}, fmt.Errorf("quic: %w", err)
	}
	return cc, nil
}

// congestionController maps CongestionControl and NewCongestionController
// onto loss recovery's choice of controller.
func (c *Config) congestionController() (recovery.Algorithm, *recovery.CustomController, error) {
	if c.NewCongestionController == nil {
		alg, err := congestionController(c.CongestionControl)
		return alg, nil, err
	}
	if c.CongestionControl != "" {
		return 0, nil, fmt.Errorf("%w: CongestionControl %q and NewCongestionController both set: choose one controller", errConfig, c.CongestionControl)
	}
	return recovery.Custom, &recovery.CustomController{New: c.NewCongestionController}, nil
}

// congestionController names Config.CongestionControl's controller.
func congestionController(name string) (recovery.Algorithm, error) {
	switch name {
	case "":
		return congestionController(DefaultCongestionControl)
	case CUBIC:
		return recovery.CUBIC, nil
	case NewReno:
		return recovery.NewReno, nil
	case BBR:
		return recovery.BBR, nil
	}
	return 0, fmt.Errorf("%w: unknown congestion controller %q", errConfig, name)
}

func coreVersions(vs []Version) []wire.Version {
	var out []wire.Version
	for _, v := range vs {
		out = append(out, wire.Version(v))
	}
	return out
}

// windowsFollowMax makes an initial receive window left unset follow a
// maximum set below the default initial window, and a maximum left unset
// follow an initial window set above the default maximum, so that setting
// only one of them is not an error.
func windowsFollowMax(cc *core.Config) {
	if cc.MaxStreamReceiveWindow != 0 && cc.InitialStreamReceiveWindow == 0 {
		cc.InitialStreamReceiveWindow = min(core.DefaultInitialStreamReceiveWindow, cc.MaxStreamReceiveWindow)
	}
	if cc.MaxConnReceiveWindow != 0 && cc.InitialConnReceiveWindow == 0 {
		cc.InitialConnReceiveWindow = min(core.DefaultInitialConnReceiveWindow, cc.MaxConnReceiveWindow)
	}
	if cc.InitialStreamReceiveWindow > core.DefaultMaxStreamReceiveWindow && cc.MaxStreamReceiveWindow == 0 {
		cc.MaxStreamReceiveWindow = cc.InitialStreamReceiveWindow
	}
	if cc.InitialConnReceiveWindow > core.DefaultMaxConnReceiveWindow && cc.MaxConnReceiveWindow == 0 {
		cc.MaxConnReceiveWindow = cc.InitialConnReceiveWindow
	}
}

// coreFEC maps the FEC configuration onto the core's, and its Policy onto
// loss recovery's FEC policy.
func (f *FECConfig) coreFEC() (*core.FECConfig, recovery.FECPolicy, error) {
	if f == nil {
		return nil, recovery.FECSignal, nil
	}
	cf := &core.FECConfig{
		MaxWindow:        f.MaxWindow,
		Fixed:            fec.FixedConfig{Sources: f.FixedSources, Repairs: f.FixedRepairs},
		MaxOverhead:      f.MaxOverhead,
		NoTailProtection: f.DisableTailProtection,
		NoDatagramOrder:  f.DisableDatagramOrder,
		DatagramHold:     f.DatagramHold,
	}
	switch f.Controller {
	case "", FECAdaptive:
		cf.Controller = core.FECAdaptive
	case FECFixed:
		cf.Controller = core.FECFixed
	default:
		return nil, 0, fmt.Errorf("%w: unknown FEC controller %q (adaptive or fixed)", errConfig, f.Controller)
	}
	switch f.Policy {
	case "", FECAuto:
		return cf, recovery.FECAuto, nil
	case FECSignal:
		return cf, recovery.FECSignal, nil
	case FECHide:
		return cf, recovery.FECHide, nil
	}
	return nil, 0, fmt.Errorf("%w: unknown FEC policy %q (auto, signal or hide)", errConfig, f.Policy)
}

// maxPacketSize bounds the datagrams the driver sends and receives: an
// Ethernet jumbo frame. The buffers are sized for it.
const maxPacketSize = 9000

// ackFrequency is the core's ACK frequency configuration: its defaults, or
// nil when disabled.
func (c *Config) ackFrequency() *core.AckFrequencyConfig {
	if c.DisableAckFrequency {
		return nil
	}
	return &core.AckFrequencyConfig{}
}
