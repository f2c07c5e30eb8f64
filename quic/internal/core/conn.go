package core

import (
	"crypto/tls"
	"fmt"
	"net/netip"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// connState is where a connection is in its life (RFC 9000 section 10).
type connState uint8

const (
	stateActive   connState = iota // handshaking or established
	stateClosing                   // we sent CONNECTION_CLOSE (section 10.2.1)
	stateDraining                  // the peer closed (section 10.2.2)
	stateClosed                    // nothing more to do
)

// Conn is one QUIC connection as a state machine: it is fed datagrams and
// timer expirations with the current time and produces datagrams to send.
// See the package documentation for the calling protocol. A Conn is not
// safe for concurrent use.
type Conn struct {
	cfg      Config
	isClient bool
	version  wire.Version
	remote   netip.AddrPort

	// tls is the TLS handshake (handshake_tls.go).
	tls tlsHandshake

	spaces   [numSpaces]*pnSpace
	appRead  *crypto.AppKeys
	appWrite *crypto.AppKeys
	ku       keyUpdateState

	sender *recovery.Sender
	// parser parses frames (receive_frames.go); frameParser makes it on
	// first use, and ReleaseIdle drops it.
	parser *wire.FrameParser

	cids        connIDs
	origDCID    wire.ConnectionID // the client's first Destination Connection ID
	localParams wire.TransportParameters
	peerParams  wire.TransportParameters
	hasPeer     bool // peer transport parameters received
	// peerSCIDSet: the client learned the server's connection ID from
	// its first Initial (RFC 9000 section 7.2); for a server, the
	// client's Source Connection ID was recorded.
	peerSCIDSet bool

	handshakeComplete  bool
	handshakeConfirmed bool
	handshakeDeadline  time.Duration
	handshakeDonePend  bool
	// hsDiscardPending: the server keeps its Handshake keys for the
	// datagram that acknowledges the client's Finished.
	hsDiscardPending bool
	// speedup resends CRYPTO data ahead of a probe timeout
	// (handshake_speedup.go).
	speedup handshakeSpeedup

	// amp is a server's anti-amplification limit (amplification.go).
	amp amplification

	rxDatagramLen int // size of the datagram being processed

	// undecryptable holds packets that arrived before their keys.
	undecryptable undecryptableQueue

	vn       versionState  // version negotiation (version.go)
	retry    retryState    // Retry and address validation tokens (retry.go)
	newToken newTokenState // a server's NEW_TOKEN frame (tokens.go)
	early    earlyState    // 0-RTT (early.go)

	maxDatagram int // current max datagram size
	// pmtu searches for a larger one (pmtud.go).
	pmtu pmtuState

	streams streamMap
	flow    connFlow

	// fec is the connection's forward erasure correction, nil when
	// Config.FEC is (fec_conn.go).
	fec *fecState
	// bdp is Careful Resume with the BDP frame (bdp.go).
	bdp bdpState
	// dgram holds the DATAGRAM frames' state and queues (datagram.go).
	dgram datagramState
	// ackRate sets the ACK threshold of fast paths (ackrate.go).
	ackRate ackRate
	// ackFreq is the ACK frequency extension (ackfreq.go).
	ackFreq ackFrequency

	// ecn marks, counts and validates ECN (ecn.go).
	ecn ecnState

	// path is the peer's address, its validation and migration
	// (path.go, migration.go).
	path peerPath

	idle idleState

	state   connState
	closing closingState // why and how it closed (close.go)

	events eventQueue
	stats  connStats

	// Scratch space reused by the packet builder; scratch makes it on
	// first use, and ReleaseIdle drops it.
	build *builder

	// qlog writes the qlog of Config.Qlog (qlog.go); rxPacketLen is the
	// size of the packet being processed, for it.
	qlog        *qlogger
	rxPacketLen int

	// debugf, when set by a test, receives a line per packet sent,
	// received and lost.
	debugf func(format string, args ...any)
}

// ServerParams describes the connection attempt a server accepts: the
// first Initial packet of a client (see PeekInitial).
type ServerParams struct {
	// RemoteAddr is the client's address.
	RemoteAddr netip.AddrPort
	// OriginalDestConnID is the Destination Connection ID of the
	// client's first Initial packet: it keys the Initial secrets and is
	// echoed in original_destination_connection_id (RFC 9000 section
	// 7.3).
	OriginalDestConnID wire.ConnectionID
	// Version is the version of the client's Initial; 0 keeps
	// Config.Version.
	Version wire.Version
	// RetrySourceConnID is set when the client's Initial answers a Retry
	// (see AddressValidator.Check): the Retry's Source Connection ID,
	// which the client's Initials now carry as Destination Connection ID
	// and which keys them. OriginalDestConnID is then the client's very
	// first one, from the token; both go into the transport parameters
	// (RFC 9000 section 7.3).
	RetrySourceConnID wire.ConnectionID
	// AddressValidated: a token proved the client's address (RFC 9000
	// section 8.1), so the server is not held to three times what it
	// receives.
	AddressValidated bool
}

// NewClientConn starts a client connection to remote at time now. Its
// first flight (the ClientHello in Initial packets) is ready at once.
func NewClientConn(cfg *Config, now time.Duration, remote netip.AddrPort) (*Conn, error) {
	c, err := newConn(cfg, now, remote, true)
	if err != nil {
		return nil, err
	}
	dcid, err := firstDestConnID(&c.cfg)
	if err != nil {
		return nil, err
	}
	c.origDCID = dcid
	c.qlog.setTrace(true, dcid)
	if err := c.cids.initClient(&c.cfg, &c.events, dcid); err != nil {
		return nil, err
	}
	c.retry.takeStoredToken(&c.cfg, c.remote)
	if err := c.spaces[spaceInitial].installInitialKeys(dcid, c.version, c.isClient); err != nil {
		return nil, err
	}
	if err := c.startTLS(now, newClientTLS(&c.cfg)); err != nil {
		return nil, err
	}
	return c, nil
}

// NewServerConn accepts a connection at time now. The caller then feeds
// it the datagram that carried the client's first Initial packet with
// HandleDatagram.
func NewServerConn(cfg *Config, now time.Duration, p ServerParams) (*Conn, error) {
	if p.OriginalDestConnID.Len() < 8 {
		// RFC 9000 section 7.2: a client's first Destination Connection
		// ID is at least 8 bytes; a server drops shorter ones.
		return nil, fmt.Errorf("%w: client's destination connection ID of %d bytes", wire.ErrConnectionIDLen, p.OriginalDestConnID.Len())
	}
	if p.Version != 0 && cfg != nil {
		cc := *cfg
		cc.Version = p.Version
		cfg = &cc
	}
	c, err := newConn(cfg, now, p.RemoteAddr, false)
	if err != nil {
		return nil, err
	}
	c.origDCID = p.OriginalDestConnID
	c.qlog.setTrace(false, c.origDCID)
	if p.RetrySourceConnID.Len() > 0 {
		c.retry.done, c.retry.scid = true, p.RetrySourceConnID
	}
	c.amp.validated = p.AddressValidated
	if err := c.cids.initServer(&c.cfg, &c.events); err != nil {
		return nil, err
	}
	if err := c.spaces[spaceInitial].installInitialKeys(c.InitialDestConnID(), c.version, c.isClient); err != nil {
		return nil, err
	}
	// Session events let the server decline 0-RTT (resume.go).
	q := tls.QUICServer(&tls.QUICConfig{TLSConfig: c.cfg.tlsConfig(), EnableSessionEvents: true})
	if err := c.startTLS(now, q); err != nil {
		return nil, err
	}
	return c, nil
}

func newConn(cfg *Config, now time.Duration, remote netip.AddrPort, isClient bool) (*Conn, error) {
	d, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if isClient {
		d.clientWindows(cfg)
	}
	rc := d.recoveryConfig(!isClient)
	if err := seedBBR(&rc, d.Rand); err != nil {
		return nil, err
	}
	sender, err := recovery.New(rc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	c := &Conn{
		cfg:               d,
		isClient:          isClient,
		version:           d.Version,
		remote:            remote,
		sender:            sender,
		maxDatagram:       d.MaxDatagramSize,
		handshakeDeadline: now + d.HandshakeTimeout,
		amp:               amplification{validated: isClient},
		retry:             retryState{started: now},
		ackFreq:           newAckFrequency(d.AckFrequency),
	}
	for i := range c.spaces {
		c.spaces[i] = newSpace(recovery.Space(i))
	}
	c.sender.SetPacketObserver(&c.pmtu)
	c.streams.init(c)
	c.ecn.init(c, d.DisableECN)
	c.flow.init(&d)
	if c.fec, err = newFECState(d.FEC, d.largestDatagram()); err != nil {
		return nil, err
	}
	if !isClient && d.CarefulResume != nil && d.CarefulResume.Sealer == nil {
		return nil, fmt.Errorf("%w: a server's CarefulResume needs a Sealer", ErrConfig)
	}
	c.bdp.cfg = d.CarefulResume
	c.dgram.init(&d)
	c.idle.init(now, d.IdleTimeout, d.KeepAlivePeriod)
	c.vn.init(c.version, isClient, d.Versions)
	c.qlog = newQlogger(d.Qlog, now)
	return c, nil
}

// startTLS sets the transport parameters this endpoint sends and starts
// the handshake q at now.
func (c *Conn) startTLS(now time.Duration, q *tls.QUICConn) error {
	c.localParams = c.cfg.transportParams(&c.cids.local[0], c.isClient)
	c.localParams.VersionInformation = c.vn.localInfo(c.version)
	c.fec.addParam(&c.localParams)
	c.bdp.addParam(&c.localParams, c.isClient, c.cfg.TLS)
	c.dgram.addParam(&c.localParams)
	if err := c.ackFreq.addParam(&c.localParams); err != nil {
		return err
	}
	if !c.isClient {
		c.retry.addParams(&c.localParams, c.origDCID)
		if err := c.offerPreferredAddress(); err != nil {
			c.Release()
			return err
		}
	}
	if err := c.tls.start(q, &c.localParams, c.isClient); err != nil {
		c.Release()
		return err
	}
	c.drainTLS(now)
	if c.state != stateActive {
		// The caller gets no Conn to release.
		c.Release()
		return c.closing.err
	}
	return nil
}

// perspective is the role of a client or a server for transport
// parameters: who sends them decides which are allowed (RFC 9000 section
// 18.2).
func perspective(isClient bool) wire.Perspective {
	if isClient {
		return wire.PerspectiveClient
	}
	return wire.PerspectiveServer
}

// firstDestConnID draws a client's first Destination Connection ID from
// cfg.Rand: unpredictable and at least 8 bytes long (RFC 9000 section
// 7.2), whatever length cfg gives the IDs the client issues.
func firstDestConnID(cfg *Config) (wire.ConnectionID, error) {
	return drawConnID(cfg.Rand, max(8, cfg.ConnIDLen))
}

// IsClient reports the connection's role.
func (c *Conn) IsClient() bool { return c.isClient }

// RemoteAddr is the peer's address, where datagrams go.
func (c *Conn) RemoteAddr() netip.AddrPort { return c.remote }

// HandshakeComplete reports whether the TLS handshake completed.
func (c *Conn) HandshakeComplete() bool { return c.handshakeComplete }

// HandshakeConfirmed reports whether the handshake is confirmed (RFC 9001
// section 4.1.2).
func (c *Conn) HandshakeConfirmed() bool { return c.handshakeConfirmed }

// ConnectionState returns the TLS state: negotiated protocol, peer
// certificates.
func (c *Conn) ConnectionState() tls.ConnectionState { return c.tls.connectionState() }

// PeerParams returns the peer's transport parameters, once received.
func (c *Conn) PeerParams() (wire.TransportParameters, bool) { return c.peerParams, c.hasPeer }

// PollEvent returns the next event, if any.
func (c *Conn) PollEvent() (Event, bool) {
	ev, ok := c.events.pop()
	if ok {
		c.streams.onEventPolled(ev)
	}
	return ev, ok
}

// Closed reports whether the connection is over: no datagram will be sent
// and no timer is armed; the driver may forget it.
func (c *Conn) Closed() bool { return c.state == stateClosed }

// Err returns why the connection closed, or nil while it is active.
func (c *Conn) Err() error { return c.closing.err }

// probeTimeout is the probe timeout of the RTT estimates rtt, without
// backoff (RFC 9002 section 6.2.1): the unit of the closing, draining and
// idle periods, the key update and 0-RTT key discard delays and the ECN
// test.
func probeTimeout(rtt *recovery.RTTStats) time.Duration {
	return rtt.SmoothedRTT() + max(4*rtt.RTTVar(), time.Millisecond) + rtt.MaxAckDelay()
}

// frameParser returns the connection's frame parser, made on first use
// and after ReleaseIdle.
func (c *Conn) frameParser() *wire.FrameParser {
	if c.parser == nil {
		c.parser = &wire.FrameParser{Extension: c.parseExtension}
	}
	return c.parser
}

// scratch returns the packet builder's scratch space, made on first use
// and after ReleaseIdle.
func (c *Conn) scratch() *builder {
	if c.build == nil {
		c.build = new(builder)
	}
	return c.build
}

// parseExtension parses the frames of the extensions this endpoint
// offered, which wire.FrameParser does not know: FEC's (fec_conn.go) and
// the BDP frame (bdp.go). Any other type is a FRAME_ENCODING_ERROR (RFC
// 9000 section 12.4). A server that knows the BDP frame parses it even
// with the extension off, so that a client returning a blob from an
// earlier configuration is ignored rather than closed.
func (c *Conn) parseExtension(t wire.FrameType, b []byte) (wire.Frame, int, error) {
	switch {
	case t.IsFEC() && c.fec != nil:
		return c.fec.parser.Parse(t, b)
	case t == wire.FrameTypeBDP && (c.bdp.offered || !c.isClient):
		return c.bdp.parser.Parse(t, b)
	}
	return nil, 0, transportError(wire.CodeFrameEncodingError, t, "unknown frame type 0x%x", uint64(t))
}
