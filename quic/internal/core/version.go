package core

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// ErrNoCommonVersion: the server answered with a Version Negotiation
// packet that lists none of the client's versions (RFC 9000 section 6.2).
// The connection attempt is abandoned; the error is a *VersionError.
var ErrNoCommonVersion = errors.New("quic: no QUIC version in common with the server")

// VersionError reports the versions a server offered in a Version
// Negotiation packet when the client supports none of them.
type VersionError struct {
	// Offered are the versions the server listed, Ours the client's.
	Offered, Ours []wire.Version
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%v: the server offers %v, the client supports %v", ErrNoCommonVersion, e.Offered, e.Ours)
}

func (e *VersionError) Unwrap() error { return ErrNoCommonVersion }

// supportedVersions are the versions this core speaks, in its default
// order of preference.
var supportedVersions = []wire.Version{wire.Version1, wire.Version2}

// compatible reports whether a first flight of version a can be turned
// into one of version b (RFC 9368 section 2.2): versions 1 and 2 share it
// (RFC 9369 section 4).
func compatible(a, b wire.Version) bool { return a.IsSupported() && b.IsSupported() }

// versionState is what version negotiation needs to remember (RFC 9000
// section 6, RFC 9368). Its methods decide; the connection switches
// versions or starts again, which takes its keys and handshake.
type versionState struct {
	// available is, for a client, the versions it may use and lists in
	// version_information, by preference; for a server, the versions it
	// accepts, by preference.
	available []wire.Version
	// upgrade: a server switches a client to a version it prefers
	// (compatible version negotiation), because Config.Versions says so.
	upgrade bool
	// first is the version of the client's first Initial packet.
	first wire.Version
	// oldInitialRead, at a server that switched versions, opens the
	// client's Initial packets still sent in the first version.
	oldInitialRead *crypto.Keys
	// afterVN: the client started again after a Version Negotiation
	// packet, so the server's version_information must confirm the
	// choice (RFC 9368 section 4, downgrade prevention).
	afterVN bool
	// switched: compatible version negotiation changed the version.
	switched bool
}

// init sets up version negotiation for a connection of version current
// and the configured versions (Config.Versions).
func (v *versionState) init(current wire.Version, isClient bool, configured []wire.Version) {
	v.first = current
	v.upgrade = !isClient && len(configured) > 0
	v.available = []wire.Version{current}
	list := configured
	if len(list) == 0 {
		list = supportedVersions
	}
	for _, x := range list {
		if !slices.Contains(v.available, x) {
			v.available = append(v.available, x)
		}
	}
	if !isClient && len(configured) > 0 {
		v.available = slices.Clone(configured)
	}
}

// localInfo is the version_information transport parameter this endpoint
// sends (RFC 9368 section 3).
func (v *versionState) localInfo(current wire.Version) *wire.VersionInformation {
	return &wire.VersionInformation{Chosen: current, Available: slices.Clone(v.available)}
}

// choose answers a Version Negotiation packet that offers versions, at a
// client using current: ok is false when the packet lists current (a stale
// or forged packet, ignored); otherwise the client starts again with next,
// the first of its versions the server lists, or gives up with a
// *VersionError.
func (v *versionState) choose(offered []wire.Version, current wire.Version) (next wire.Version, ok bool, err error) {
	if slices.Contains(offered, current) {
		return 0, false, nil
	}
	for _, x := range v.available {
		if slices.Contains(offered, x) {
			return x, true, nil
		}
	}
	return 0, true, &VersionError{Offered: offered, Ours: slices.Clone(v.available)}
}

// checkServerInfo validates, at a client using current, the server's
// version_information (RFC 9368 sections 4 and 5).
func (v *versionState) checkServerInfo(vi *wire.VersionInformation, current wire.Version) error {
	if vi == nil {
		if v.afterVN {
			return transportError(wire.CodeVersionNegotiationError, 0, "no version_information after version negotiation")
		}
		return nil
	}
	if vi.Chosen != current {
		return transportError(wire.CodeVersionNegotiationError, 0, "server chose %v in version_information, its packets are %v", vi.Chosen, current)
	}
	if v.afterVN {
		// Downgrade prevention: with the server's full list, the client
		// would have chosen the version it uses now.
		for _, x := range v.available {
			if slices.Contains(vi.Available, x) {
				if x != current {
					return transportError(wire.CodeVersionNegotiationError, 0, "server supports %v, preferred to %v", x, current)
				}
				break
			}
		}
	}
	return nil
}

// checkClientInfo validates, at a server using current, the client's
// version_information (RFC 9368 section 4) and performs compatible
// version negotiation (section 2.3): upgrade reports the first version
// the server prefers that the client listed as compatible with its first
// flight, when it is not current.
func (v *versionState) checkClientInfo(vi *wire.VersionInformation, current wire.Version) (next wire.Version, upgrade bool, err error) {
	if vi == nil {
		return 0, false, nil
	}
	if vi.Chosen != v.first {
		return 0, false, transportError(wire.CodeVersionNegotiationError, 0, "client chose %v in version_information but sent %v", vi.Chosen, v.first)
	}
	if !v.upgrade || v.switched {
		return 0, false, nil
	}
	for _, x := range v.available {
		if slices.Contains(vi.Available, x) && compatible(v.first, x) {
			return x, x != current, nil
		}
	}
	return 0, false, nil
}

// followsServer reports whether a client using current switches to the
// version of the server's Initial packet, which differs from current: a
// version it listed as compatible, until the ServerHello (handshakeKeys),
// which the server sends in the version it chose; an ACK may have come in
// the first version before (RFC 9368 section 2.3).
func (v *versionState) followsServer(server, current wire.Version, handshakeKeys bool) bool {
	return !v.switched && !v.afterVN && !handshakeKeys && slices.Contains(v.available, server) && compatible(current, server)
}

// firstInitialKeys returns the keys that open a client's Initial packet of
// version pv at a server that switched from it, or nil.
func (v *versionState) firstInitialKeys(pv wire.Version) *crypto.Keys {
	if pv != v.first {
		return nil
	}
	return v.oldInitialRead
}

// checkVersions validates Config.Versions.
func checkVersions(vs []wire.Version) bool {
	for _, v := range vs {
		if !v.IsSupported() {
			return false
		}
	}
	return true
}

// VersionNegotiation appends to buf the Version Negotiation packet a
// server sends in answer to datagram (RFC 9000 section 6.1), when the
// datagram starts with a long header of a version not in supported (nil
// means supportedVersions). It reports false, appending nothing, when no
// answer is due: a short header, a Version Negotiation packet (never
// answered), a supported version, or a datagram under 1200 bytes, which
// could not carry a client's first Initial (section 14.1) and must not buy
// an amplified answer.
func VersionNegotiation(buf, datagram []byte, supported []wire.Version) ([]byte, bool) {
	if len(supported) == 0 {
		supported = supportedVersions
	}
	if len(datagram) < minInitialDatagram || !wire.IsLongHeader(datagram[0]) {
		return buf, false
	}
	h, _, err := wire.ParseInvariantLongHeader(datagram)
	if err != nil || h.Version == wire.VersionNegotiationVersion || slices.Contains(supported, h.Version) {
		return buf, false
	}
	// Section 6.3: a reserved version greases the client's parser; it
	// is derived from the packet so that the answer stays stateless.
	var g uint32
	for i := range min(len(h.DstConnID), 2) {
		g = g<<8 | uint32(h.DstConnID[i])
	}
	// The high nibble of each byte is free, the low one is 0xa.
	grease := wire.Version(0x0a0a0a0a | g>>12&0xf<<28 | g>>8&0xf<<20 | g>>4&0xf<<12 | g&0xf<<4)
	vn := wire.VersionNegotiation{
		// Section 17.2.1: the connection IDs are echoed, swapped.
		DstConnID: h.SrcConnID,
		SrcConnID: h.DstConnID,
		Versions:  append(slices.Clone(supported), grease),
	}
	unused := byte(0)
	if len(h.SrcConnID) > 0 {
		unused = h.SrcConnID[0]
	}
	out, err := wire.AppendVersionNegotiation(buf, &vn, unused)
	if err != nil {
		return buf, false
	}
	return out, true
}

// onVersionNegotiation handles a Version Negotiation packet received at
// now by a client (RFC 9000 section 6.2): it is ignored once any other
// packet was processed, when its connection IDs do not echo ours, and when
// it lists the version in use; otherwise the client starts again with
// another version, or gives up with a *VersionError.
func (c *Conn) onVersionNegotiation(now time.Duration, data []byte) bool {
	if !c.isClient || c.stats.PacketsReceived > 0 || c.vn.afterVN || c.retry.done {
		return false
	}
	vn, err := wire.ParseVersionNegotiation(data)
	if err != nil {
		return false
	}
	if string(vn.DstConnID) != string(c.cids.local[0].id.Bytes()) || string(vn.SrcConnID) != string(c.cids.dcid().Bytes()) {
		return false
	}
	next, ok, err := c.vn.choose(vn.Versions, c.version)
	if !ok {
		return false
	}
	if err == nil {
		err = c.restartWithVersion(now, next)
	}
	if err != nil {
		c.end(stateClosed, err)
	}
	return true
}

// restartWithVersion starts the connection attempt again at now with
// version v after a Version Negotiation packet (RFC 9368 section 4,
// incompatible negotiation): new Initial keys, a new Destination
// Connection ID, a new TLS handshake. The connection ID the driver routes
// by, the events and the counters stay.
func (c *Conn) restartWithVersion(now time.Duration, v wire.Version) error {
	cfg := c.cfg
	cfg.Version = v
	fresh, err := newConn(&cfg, now, c.remote, true)
	if err != nil {
		return err
	}
	dcid, err := firstDestConnID(&fresh.cfg)
	if err != nil {
		return err
	}
	fresh.origDCID = dcid
	fresh.cids = c.cids
	fresh.cids.peer = []peerCID{{seq: 0, id: dcid}}
	fresh.events = c.events
	fresh.stats = c.stats
	fresh.handshakeDeadline = c.handshakeDeadline
	fresh.qlog = c.qlog
	fresh.qlog.setTrace(true, dcid)
	fresh.vn.available = c.vn.available
	fresh.vn.afterVN = true
	// The abandoned handshake's goroutine ends with its QUICConn.
	c.tls.release()
	*c = *fresh
	c.streams.c = c
	if err := c.spaces[spaceInitial].installInitialKeys(dcid, c.version, c.isClient); err != nil {
		return err
	}
	return c.startTLS(now, newClientTLS(&c.cfg))
}

// checkPeerVersionInfo validates the peer's version_information (RFC 9368
// sections 4 and 5) and, at a server, performs compatible version
// negotiation: the server's packets use the new version from its first
// Initial on; the client's Initials in the first version are still read
// until the client switches. A failure is a VERSION_NEGOTIATION_ERROR.
func (c *Conn) checkPeerVersionInfo(p *wire.TransportParameters) error {
	if c.isClient {
		return c.vn.checkServerInfo(p.VersionInformation, c.version)
	}
	next, upgrade, err := c.vn.checkClientInfo(p.VersionInformation, c.version)
	if !upgrade {
		return err
	}
	old := c.spaces[spaceInitial].read
	if c.switchVersion(next) {
		c.vn.oldInitialRead = old
	}
	return nil
}

// switchVersion moves the connection to version v: its Initial keys are
// derived again with v's salt (RFC 9369 section 3.3.1), and the transport
// parameters name v. It reports false when the keys could not be derived,
// which closes the connection.
func (c *Conn) switchVersion(v wire.Version) bool {
	c.version = v
	c.vn.switched = true
	if err := c.spaces[spaceInitial].installInitialKeys(c.InitialDestConnID(), c.version, c.isClient); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "switching to %v: %v", v, err))
		return false
	}
	c.localParams.VersionInformation = c.vn.localInfo(c.version)
	return true
}

// handleOtherVersion handles a long header packet received at now whose
// version is not the connection's. A client accepts the server's first
// Initial in another version it listed as compatible (RFC 9368 section
// 2.3) and switches to it; a server that switched reads the client's
// Initials in the first version until the client follows. Anything else
// is dropped.
func (c *Conn) handleOtherVersion(now time.Duration, data []byte, h *wire.LongHeader, pnOffset int) (int, bool) {
	size := pnOffset + int(h.Length)
	c.rxPacketLen = size
	if h.Type == wire.PacketTypeRetry {
		return len(data), false
	}
	if h.Type != wire.PacketTypeInitial {
		return size, false
	}
	if c.isClient {
		if !c.vn.followsServer(h.Version, c.version, c.spaces[spaceHandshake].read != nil) {
			return size, false
		}
		// Keys of the other version are tried before the switch: an
		// unauthenticated packet must not move the connection.
		keys, err := initialReadKeys(c.InitialDestConnID(), h.Version, c.isClient)
		if err != nil || !opensLong(keys, data[:size], pnOffset) {
			return size, false
		}
		if !c.switchVersion(h.Version) {
			return size, false
		}
		return size, c.handleLong(now, data[:size], h, pnOffset)
	}
	old := c.vn.firstInitialKeys(h.Version)
	sp := c.spaces[spaceInitial]
	if old == nil || sp.discarded {
		return size, false
	}
	cur := sp.read
	sp.read = old
	ok := c.handleLong(now, data[:size], h, pnOffset)
	sp.read = cur
	return size, ok
}

// initialReadKeys derives the Initial read keys of an endpoint in version
// v from the client's first Destination Connection ID.
func initialReadKeys(dcid wire.ConnectionID, v wire.Version, isClient bool) (*crypto.Keys, error) {
	client, server, err := crypto.NewInitial(dcid.Bytes(), crypto.Version(v))
	if err != nil {
		return nil, err
	}
	if isClient {
		return server, nil
	}
	return client, nil
}

// opensLong reports whether keys authenticate a long header packet,
// without modifying it.
func opensLong(keys *crypto.Keys, pkt []byte, pnOffset int) bool {
	cp := append([]byte(nil), pkt...)
	pnLen, truncated, err := keys.Header().Remove(cp, pnOffset)
	if err != nil {
		return false
	}
	pn, err := wire.DecodePacketNumber(wire.InvalidPacketNumber, truncated, pnLen)
	if err != nil {
		return false
	}
	_, err = keys.Packet().Open(cp, pnOffset+pnLen, pn)
	return err == nil
}

// isVersionNegotiation reports whether a long header packet is a Version
// Negotiation packet (version 0, RFC 9000 section 17.2.1).
func isVersionNegotiation(b []byte) bool {
	return len(b) >= 5 && b[1]|b[2]|b[3]|b[4] == 0
}
