package core

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Defaults of Config. They suit a satellite path out of the box: the flow
// control windows grow to 160 MiB per stream and 256 MiB per connection,
// and a stream's send buffer to 160 MiB, at least twice the
// bandwidth-delay product of 1 Gbit/s x 650 ms (81.25 MB), as the
// congestion window's cap (recovery.DefaultMaxWindow) is. The maxima
// commit no memory: receive and send buffers take pooled blocks as data
// arrives or is written and give them back as it is read or acknowledged
// (recvbuf.go, sendbuf.go), and the windows start small and grow with
// what the application consumes (flow.go).
const (
	DefaultConnIDLen                  = 8
	DefaultMaxDatagramSize            = 1200
	DefaultMaxProbeDatagramSize       = 1452
	DefaultMaxReceiveDatagramSize     = 1500 - 28
	DefaultHandshakeTimeout           = 20 * time.Second
	DefaultIdleTimeout                = 30 * time.Second
	DefaultMaxAckDelay                = 25 * time.Millisecond
	DefaultAckDelayExponent           = 3
	DefaultAckElicitingThreshold      = 2
	DefaultMaxAckRanges               = 64
	DefaultInitialStreamReceiveWindow = 512 << 10
	DefaultMaxStreamReceiveWindow     = 160 << 20
	DefaultInitialConnReceiveWindow   = 768 << 10
	DefaultMaxConnReceiveWindow       = 256 << 20
	// A client's initial windows are larger: see clientWindows.
	DefaultClientInitialStreamReceiveWindow = 64 << 20
	DefaultClientInitialConnReceiveWindow   = 128 << 20
	DefaultMinSendBuffer                    = 1 << 20
	DefaultMaxSendBuffer                    = 160 << 20
	DefaultMaxIncomingStreams               = 100
	DefaultMaxCryptoBuffer                  = 64 << 10
	DefaultActiveConnIDLimit                = 4
)

// ErrConfig reports an invalid Config.
var ErrConfig = errors.New("quic core: invalid config")

// Config configures a connection. The zero value of a field selects its
// default (the Default constants); every constant derived from time is
// here, so that a path with a 600 ms RTT can be described.
type Config struct {
	// TLS configures the TLS 1.3 handshake. It must name an application
	// protocol in NextProtos (RFC 9001 section 8.1); a server needs a
	// certificate. MinVersion is raised to TLS 1.3 in a copy; a server
	// whose session tickets must outlive a connection (resumption, 0-RTT)
	// sets MinVersion to TLS 1.3 or SessionTicketKey itself, because a
	// copy draws its own ticket keys.
	TLS *tls.Config
	// Rand supplies connection IDs, stateless reset tokens (without
	// ResetKey) and PATH_CHALLENGE data. Nil means crypto/rand; tests pass
	// a seeded source so that a run replays.
	Rand io.Reader
	// Version is the QUIC version: wire.Version1 (default) or
	// wire.Version2.
	Version wire.Version
	// Versions are the versions this endpoint accepts, by preference
	// (RFC 9368). A client starts with Version; told by a Version
	// Negotiation packet that the server supports none of it, it starts
	// again with the first of Versions the server lists. Nil means
	// Version, then the other supported versions. A server with Versions
	// set moves a client whose first flight lists one of them as
	// compatible to the first it prefers (compatible version
	// negotiation); nil keeps the client's version.
	Versions []wire.Version
	// ConnIDLen is the length of the connection IDs this endpoint issues,
	// 1 to 20 bytes (default 8). A client's first Destination Connection
	// ID is at least 8 bytes whatever this says (RFC 9000 section 7.2).
	ConnIDLen int
	// NewConnID, if set, fills id (ConnIDLen bytes) with a connection ID
	// this endpoint issues, drawing its randomness from r (Rand); nil
	// draws the whole ID from Rand. A server whose socket group or load
	// balancer routes by connection ID encodes the route in it.
	NewConnID func(id []byte, r io.Reader) error
	// ResetKey derives the stateless reset tokens of the connection IDs
	// this endpoint issues (RFC 9000 section 10.3.2), so that the endpoint
	// can reset a connection whose state it lost. Nil draws random tokens.
	ResetKey *crypto.ResetKey

	// MaxDatagramSize is the largest UDP payload sent (default 1200, the
	// size every QUIC path carries) until path MTU discovery finds a
	// larger one. It is lowered to the peer's max_udp_payload_size.
	MaxDatagramSize int
	// MaxProbeDatagramSize is the largest UDP payload path MTU discovery
	// tries (default 1452: a 1500-byte MTU under IPv6 and UDP headers),
	// bounded by the peer's max_udp_payload_size (pmtud.go).
	MaxProbeDatagramSize int
	// DisablePathMTUDiscovery keeps MaxDatagramSize for the whole
	// connection.
	DisablePathMTUDiscovery bool
	// MaxReceiveDatagramSize is the largest UDP payload the driver can
	// receive (default 1472, a 1500-byte IPv4 MTU, or MaxDatagramSize if
	// larger), advertised as max_udp_payload_size (RFC 9000 section
	// 18.2).
	MaxReceiveDatagramSize int
	// DisableActiveMigration sends disable_active_migration (RFC 9000
	// section 18.2): the peer must not move to a new local address.
	// A NAT rebinding is followed all the same (section 9: the peer
	// cannot tell it happened).
	DisableActiveMigration bool
	// PreferredIPv4 and PreferredIPv6, at a server, are the addresses
	// it sends in preferred_address (RFC 9000 section 9.6), with a
	// connection ID of its own: a client moves there once its
	// handshake is confirmed. The driver must receive there, and route
	// by connection ID to the same connections. Either may be unset.
	PreferredIPv4, PreferredIPv6 netip.AddrPort
	// HandshakeTimeout bounds the handshake (default 20 s).
	HandshakeTimeout time.Duration
	// IdleTimeout is max_idle_timeout (default 30 s); the effective
	// timeout is the smaller of both endpoints', at least three PTOs
	// (RFC 9000 section 10.1).
	IdleTimeout time.Duration
	// MaxAckDelay is max_ack_delay: how long an ACK may be delayed
	// (default 25 ms).
	MaxAckDelay time.Duration
	// AckDelayExponent is ack_delay_exponent (default 3).
	AckDelayExponent uint8
	// AckElicitingThreshold is the number of ack-eliciting packets
	// received before an ACK is sent without waiting for MaxAckDelay
	// (default 2, RFC 9000 section 13.2.2). Raise it on asymmetric paths
	// whose return link is thin.
	AckElicitingThreshold int
	// NoAckRateAdaptation keeps AckElicitingThreshold whatever the
	// rate; by default the threshold grows on fast paths so that about 256
	// ACKs go out per round trip, up to 32 packets per ACK (ackrate.go).
	NoAckRateAdaptation bool
	// MaxAckRanges bounds the ranges of an ACK frame (default 64).
	MaxAckRanges int

	// InitialStreamReceiveWindow and MaxStreamReceiveWindow bound the
	// receive window of each stream; it starts at the first and grows up
	// to the second when the application reads faster than the window
	// lasts (auto-tuning). Defaults: 512 KiB (64 MiB for a client, see
	// clientWindows) and 160 MiB.
	InitialStreamReceiveWindow uint64
	MaxStreamReceiveWindow     uint64
	// InitialConnReceiveWindow and MaxConnReceiveWindow do the same for
	// the connection. Defaults: 768 KiB (128 MiB for a client) and 256
	// MiB, so that a stream at its largest window leaves room for others.
	InitialConnReceiveWindow uint64
	MaxConnReceiveWindow     uint64
	// MinSendBuffer and MaxSendBuffer bound the bytes a stream buffers
	// before StreamWrite accepts no more: twice the congestion window of
	// bytes not yet acknowledged (those acknowledged above a gap do not
	// count), within these bounds, and MaxSendBuffer held in all
	// (defaults 1 MiB and 160 MiB, which holds the largest default
	// congestion window).
	MinSendBuffer int
	MaxSendBuffer int
	// MaxIncomingStreamsBidi and MaxIncomingStreamsUni are how many
	// streams the peer may have open at once (default 100 each).
	MaxIncomingStreamsBidi uint64
	MaxIncomingStreamsUni  uint64
	// MaxCryptoBuffer bounds the out-of-order CRYPTO data buffered per
	// encryption level (default 64 KiB).
	MaxCryptoBuffer int
	// ActiveConnIDLimit is active_connection_id_limit (default 4).
	ActiveConnIDLimit uint64
	// KeepAlivePeriod, if set, sends a PING when nothing was sent or
	// received for that long after the handshake, so that NAT bindings
	// and the idle timeout do not end a quiet connection.
	KeepAlivePeriod time.Duration
	// TokenStore, on a client, keeps the tokens servers send in
	// NEW_TOKEN frames and gives one to the next connection to the same
	// server (RFC 9000 section 8.1.3); nil neither keeps nor uses them.
	TokenStore TokenStore
	// AddressValidator, on a server, makes the token sent in a NEW_TOKEN
	// frame once the handshake is confirmed; nil sends none. The driver
	// uses the same validator to check tokens and send Retry packets.
	AddressValidator *AddressValidator
	// Allow0RTT enables 0-RTT (RFC 9001 section 4.6). A client resuming
	// a session whose ticket allows it sends stream data in 0-RTT
	// packets, within the limits the server had (RFC 9000 section
	// 7.4.1); a server issues tickets that allow it and accepts it.
	// 0-RTT data can be replayed by an attacker (RFC 9001 section 9.2),
	// so it is off by default: enable it where the application's first
	// requests are safe to repeat.
	Allow0RTT bool
	// ResumeRTT starts a resumed client connection from the smoothed RTT
	// of the connection that gave its session ticket instead of
	// Recovery.InitialRTT (RFC 9002 section 6.2.2): on a 600 ms GEO path,
	// probes and pacing of the first flight then follow the real RTT.
	ResumeRTT bool
	// Qlog, if set, receives the connection's qlog in the JSON-SEQ
	// serialization (one record per event: transport:packet_sent and
	// packet_received; recovery:metrics_updated, congestion_state_updated
	// and packet_lost, from which qvis draws congestion graphs), with
	// times in milliseconds since the connection started. The driver
	// opens one writer per connection, for instance a file in QLOGDIR
	// named after OriginalDestConnID.
	Qlog io.Writer
	// KeyUpdateInterval starts a key update after this many packets
	// sealed with one key (RFC 9001 section 6); 0 updates only before
	// the AEAD confidentiality limit.
	KeyUpdateInterval uint64

	// Recovery configures loss recovery, congestion control and pacing:
	// the initial RTT (333 ms, RFC 9002 section 6.2.2), the congestion
	// controller (CUBIC), the congestion window's cap (160 MiB), pacing,
	// the long-RTT slow start, and how packets the peer rebuilt with FEC
	// count (FECPolicy). Its zero fields take recovery's defaults
	// (recovery.Config.WithDefaults). The connection sets its IsServer
	// (the role) and its MaxDatagramSize (MaxDatagramSize above, which
	// path MTU discovery raises). Its MaxAckDelay is the peer's
	// max_ack_delay until the peer's transport parameters arrive (RFC
	// 9000 section 18.2's default), not this endpoint's MaxAckDelay.
	Recovery recovery.Config
	// DisableECN turns ECN off: datagrams go out Not-ECT and the
	// codepoints of received ones are neither counted nor reported. A
	// driver whose socket cannot read or set codepoints sets it. With
	// ECN on, the connection tests the path with its first 1-RTT
	// datagrams, validates the peer's counts and reacts to CE marks as
	// to loss, without the loss (RFC 9000 section 13.4, RFC 9002
	// section 7.1).
	DisableECN bool
	// FEC, if set, offers forward erasure correction to the peer and
	// protects what this endpoint sends when the peer offers it too
	// (FECConfig).
	FEC *FECConfig
	// CarefulResume, if set, offers Careful Resume with the BDP frame
	// (bdp.go): a server hands a client that offers it too its saved
	// path state, sealed, and resumes from the state a client returns; a
	// client with a TLS ClientSessionCache offers it, keeps the latest
	// state with its session ticket and returns it on its next
	// connection. Nil: neither.
	CarefulResume *CarefulResumeConfig
	// EnableDatagrams offers DATAGRAM frames (RFC 9221) in the
	// max_datagram_frame_size transport parameter; SendDatagram works
	// when the peer offers them too (datagram.go).
	EnableDatagrams bool
	// DatagramSendQueue and DatagramReceiveQueue bound the datagrams
	// waiting to be sent and to be read (default 256 each): a full send
	// queue drops its oldest, a full receive queue the arriving one.
	DatagramSendQueue, DatagramReceiveQueue int
	// AckFrequency, if set, offers the ACK frequency extension
	// (draft-ietf-quic-ack-frequency, ackfreq.go): this endpoint
	// acknowledges as a peer that offers it asks, and asks such a peer
	// for fewer ACKs on paths with a large window. Nil: neither, and the
	// peer's frames are unknown ones.
	AckFrequency *AckFrequencyConfig
}

// withDefaults returns a copy of c with defaults filled in, or an error
// naming the first invalid field.
func (c *Config) withDefaults() (Config, error) {
	if c == nil {
		return Config{}, fmt.Errorf("%w: nil config", ErrConfig)
	}
	d := *c
	if d.TLS == nil {
		return d, fmt.Errorf("%w: no TLS config", ErrConfig)
	}
	if d.Rand == nil {
		d.Rand = rand.Reader
	}
	if d.Version == 0 {
		d.Version = wire.Version1
	}
	setDefault(&d.ConnIDLen, DefaultConnIDLen)
	setDefault(&d.MaxDatagramSize, DefaultMaxDatagramSize)
	setDefault(&d.MaxProbeDatagramSize, DefaultMaxProbeDatagramSize)
	setDefault(&d.MaxReceiveDatagramSize, max(DefaultMaxReceiveDatagramSize, d.MaxDatagramSize))
	setDefault(&d.HandshakeTimeout, DefaultHandshakeTimeout)
	setDefault(&d.IdleTimeout, DefaultIdleTimeout)
	setDefault(&d.MaxAckDelay, DefaultMaxAckDelay)
	setDefault(&d.AckDelayExponent, DefaultAckDelayExponent)
	setDefault(&d.AckElicitingThreshold, DefaultAckElicitingThreshold)
	setDefault(&d.MaxAckRanges, DefaultMaxAckRanges)
	setDefault(&d.InitialStreamReceiveWindow, DefaultInitialStreamReceiveWindow)
	setDefault(&d.MaxStreamReceiveWindow, DefaultMaxStreamReceiveWindow)
	setDefault(&d.InitialConnReceiveWindow, DefaultInitialConnReceiveWindow)
	setDefault(&d.MaxConnReceiveWindow, DefaultMaxConnReceiveWindow)
	setDefault(&d.MinSendBuffer, DefaultMinSendBuffer)
	setDefault(&d.MaxSendBuffer, DefaultMaxSendBuffer)
	setDefault(&d.MaxIncomingStreamsBidi, DefaultMaxIncomingStreams)
	setDefault(&d.MaxIncomingStreamsUni, DefaultMaxIncomingStreams)
	setDefault(&d.MaxCryptoBuffer, DefaultMaxCryptoBuffer)
	setDefault(&d.ActiveConnIDLimit, DefaultActiveConnIDLimit)
	setDefault(&d.DatagramSendQueue, DefaultDatagramSendQueue)
	setDefault(&d.DatagramReceiveQueue, DefaultDatagramReceiveQueue)
	var err error
	if d.CarefulResume, err = d.CarefulResume.withDefaults(); err != nil {
		return d, err
	}
	if d.AckFrequency, err = d.AckFrequency.withDefaults(d.MaxAckDelay); err != nil {
		return d, err
	}
	d.Recovery = d.Recovery.WithDefaults()
	d.Recovery.MaxDatagramSize = d.MaxDatagramSize
	return d, d.validate()
}

func setDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

func (c *Config) validate() error {
	checks := []struct {
		ok  bool
		msg string
	}{
		{c.Version.IsSupported(), "unsupported QUIC version"},
		{checkVersions(c.Versions), "unsupported QUIC version in Versions"},
		{c.ConnIDLen >= 1 && c.ConnIDLen <= wire.MaxConnectionIDLen, "ConnIDLen out of [1, 20]"},
		{c.MaxDatagramSize >= wire.MinMaxUDPPayloadSize && c.MaxDatagramSize <= wire.DefaultMaxUDPPayloadSize, "MaxDatagramSize out of [1200, 65527]"},
		{validDatagramSize(c.MaxProbeDatagramSize), "MaxProbeDatagramSize out of [1200, 65527]"},
		{validDatagramSize(c.MaxReceiveDatagramSize), "MaxReceiveDatagramSize out of [1200, 65527]"},
		{c.HandshakeTimeout > 0 && c.IdleTimeout > 0 && c.MaxAckDelay > 0 && c.KeepAlivePeriod >= 0, "negative duration"},
		{c.MaxAckDelay < wire.MaxMaxAckDelayMs*time.Millisecond, "MaxAckDelay of 2^14 ms or more"},
		{c.AckDelayExponent <= wire.MaxAckDelayExponent, "AckDelayExponent above 20"},
		{c.AckElicitingThreshold >= 1 && c.MaxAckRanges >= 1, "AckElicitingThreshold or MaxAckRanges below 1"},
		{c.InitialStreamReceiveWindow <= c.MaxStreamReceiveWindow, "InitialStreamReceiveWindow above MaxStreamReceiveWindow"},
		{c.InitialConnReceiveWindow <= c.MaxConnReceiveWindow, "InitialConnReceiveWindow above MaxConnReceiveWindow"},
		{c.MaxConnReceiveWindow <= wire.MaxVarint && c.MaxStreamReceiveWindow <= wire.MaxVarint, "receive window above 2^62-1"},
		{c.MinSendBuffer > 0 && c.MinSendBuffer <= c.MaxSendBuffer, "MinSendBuffer out of (0, MaxSendBuffer]"},
		{c.MaxIncomingStreamsBidi <= wire.MaxStreamsLimit && c.MaxIncomingStreamsUni <= wire.MaxStreamsLimit, "stream limit above 2^60"},
		{c.MaxCryptoBuffer > 0, "MaxCryptoBuffer below 1"},
		{c.ActiveConnIDLimit >= wire.MinActiveConnectionIDLimit && c.ActiveConnIDLimit <= 64, "ActiveConnIDLimit out of [2, 64]"},
		{c.DatagramSendQueue > 0 && c.DatagramReceiveQueue > 0, "DatagramSendQueue or DatagramReceiveQueue below 1"},
	}
	for _, chk := range checks {
		if !chk.ok {
			return fmt.Errorf("%w: %s", ErrConfig, chk.msg)
		}
	}
	if err := c.Recovery.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if c.FEC != nil {
		if _, err := c.FEC.withDefaults(); err != nil {
			return err
		}
	}
	return nil
}

// clientWindows gives a client whose configuration left them unset the
// client's initial receive windows. On a long path a satquic server sends
// a bandwidth-delay product a round trip after its first flight (the
// long-RTT slow start's jump, recovery.LongRTTConfig, and BBR's first
// Startup): 625 kB on seed-ifc, 4 MB on a 50 Mbit/s GEO path, 18.75 MB on
// geo-lossy's 250 Mbit/s x 600 ms, and BBR's Startup sends up to twice
// that in the round trip after. A window of 512 KiB, which the receiver
// only raises once it has measured a round trip of reads, would stall that
// round trip; so did 8 MiB on geo-lossy, where the sender waited 1.05 s
// for credit (BBR, 100 MB with FEC, seed 1, TestSimTraceDownload: 7.18 s,
// and 5.26 s with the windows at their maximum from the start). The
// window must also outlast a lost packet that holds the read offset back
// for a round trip while the data behind it arrives: with 32 MiB the
// sender still waited 0.9 s (6.23 s); 64 MiB per stream, 128 MiB per
// connection, gave 5.27 s. A client commits the memory to its own downloads; a server,
// which receives from many clients and mostly small requests, keeps the
// small windows.
func (d *Config) clientWindows(orig *Config) {
	if orig.InitialStreamReceiveWindow == 0 {
		d.InitialStreamReceiveWindow = min(DefaultClientInitialStreamReceiveWindow, d.MaxStreamReceiveWindow)
	}
	if orig.InitialConnReceiveWindow == 0 {
		d.InitialConnReceiveWindow = min(DefaultClientInitialConnReceiveWindow, d.MaxConnReceiveWindow)
	}
}

// recoveryConfig is the loss recovery configuration of an endpoint in
// the role isServer, from a Config with its defaults filled in.
func (c *Config) recoveryConfig(isServer bool) recovery.Config {
	rc := c.Recovery
	rc.IsServer = isServer
	return rc
}

// seedBBR draws BBR's seed from Rand when the configuration sets none:
// flows that share a bottleneck then pick different probe times
// (recovery.BBRConfig.Seed).
func seedBBR(rc *recovery.Config, r io.Reader) error {
	if rc.Algorithm != recovery.BBR || rc.BBR.Seed != 0 {
		return nil
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return fmt.Errorf("%w: drawing BBR's seed: %w", ErrConfig, err)
	}
	rc.BBR.Seed = binary.BigEndian.Uint64(b[:])
	return nil
}

// tlsConfig returns the TLS configuration for QUIC: TLS 1.3 only (RFC 9001
// section 4.2).
func (c *Config) tlsConfig() *tls.Config {
	if c.TLS.MinVersion >= tls.VersionTLS13 {
		// Shared, not cloned: a server's automatic session ticket keys
		// live in the tls.Config, and tickets must open on the next
		// connection.
		return c.TLS
	}
	t := c.TLS.Clone()
	if t.MinVersion < tls.VersionTLS13 {
		t.MinVersion = tls.VersionTLS13
	}
	return t
}

// transportParams are the transport parameters of an endpoint with this
// configuration, its defaults filled in, whose first connection ID is
// first (RFC 9000 section 18.2): its limits, and first as
// initial_source_connection_id, which the peer authenticates (section
// 7.3); a server's carry first's stateless reset token too. The
// connection adds its version information, its FEC offer and, at a
// server, the client's connection IDs (retryState.addParams).
func (c *Config) transportParams(first *localCID, isClient bool) wire.TransportParameters {
	p := wire.DefaultTransportParameters()
	p.MaxIdleTimeoutMs = uint64(c.IdleTimeout.Milliseconds())
	// What the driver can receive, not what this endpoint sends: the
	// peer's path MTU discovery stops there (RFC 9000 section 18.2).
	p.MaxUDPPayloadSize = uint64(c.MaxReceiveDatagramSize)
	p.InitialMaxData = c.InitialConnReceiveWindow
	p.InitialMaxStreamDataBidiLocal = c.InitialStreamReceiveWindow
	p.InitialMaxStreamDataBidiRemote = c.InitialStreamReceiveWindow
	p.InitialMaxStreamDataUni = c.InitialStreamReceiveWindow
	p.InitialMaxStreamsBidi = c.MaxIncomingStreamsBidi
	p.InitialMaxStreamsUni = c.MaxIncomingStreamsUni
	p.AckDelayExponent = uint64(c.AckDelayExponent)
	p.MaxAckDelayMs = uint64((c.MaxAckDelay + time.Millisecond - 1) / time.Millisecond)
	p.ActiveConnectionIDLimit = c.ActiveConnIDLimit
	p.DisableActiveMigration = c.DisableActiveMigration
	scid := first.id
	p.InitialSourceConnectionID = &scid
	if !isClient {
		tok := first.token
		p.StatelessResetToken = &tok
	}
	return p
}
