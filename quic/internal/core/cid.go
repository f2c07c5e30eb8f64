package core

import (
	"crypto/subtle"
	"fmt"
	"io"
	"slices"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// maxIssuedConnIDs bounds the connection IDs this endpoint keeps active,
// whatever the peer's active_connection_id_limit allows.
const maxIssuedConnIDs = 8

// localCID is a connection ID this endpoint issued (RFC 9000 section 5.1).
type localCID struct {
	seq   uint64
	id    wire.ConnectionID
	token wire.StatelessResetToken
}

// peerCID is a connection ID the peer issued, usable as a Destination
// Connection ID.
type peerCID struct {
	seq      uint64
	id       wire.ConnectionID
	token    wire.StatelessResetToken
	hasToken bool
}

// connIDs manages both sets of connection IDs (RFC 9000 section 5.1.1):
// the ones this endpoint issued, announced in NEW_CONNECTION_ID frames, and
// the peer's, of which the lowest sequence number is in use. The methods
// that issue or retire one report it to the driver through the event
// queue they are handed.
type connIDs struct {
	// rand, idLen and resetKey make this endpoint's connection IDs and
	// their reset tokens (Config.Rand, ConnIDLen and ResetKey); limit is
	// its active_connection_id_limit (Config.ActiveConnIDLimit).
	rand     io.Reader
	idLen    int
	newID    func(id []byte, r io.Reader) error // Config.NewConnID
	resetKey *crypto.ResetKey
	limit    uint64

	local    []localCID
	nextSeq  uint64
	announce []uint64 // sequence numbers to send in NEW_CONNECTION_ID

	peer          []peerCID // ascending sequence numbers; peer[0] is in use
	retirePriorTo uint64
	retire        []uint64 // sequence numbers to send in RETIRE_CONNECTION_ID
	peerLimit     uint64   // the peer's active_connection_id_limit

	// peerInitialSCID is the Source Connection ID of the peer's first
	// Initial packet, which initial_source_connection_id must match.
	peerInitialSCID wire.ConnectionID
}

// init sets up the first connection ID this endpoint issues, with cfg's
// source of randomness and reset key.
func (ids *connIDs) init(cfg *Config, ev *eventQueue) error {
	ids.rand, ids.idLen, ids.resetKey = cfg.Rand, cfg.ConnIDLen, cfg.ResetKey
	ids.newID = cfg.NewConnID
	ids.limit = cfg.ActiveConnIDLimit
	ids.peerLimit = wire.DefaultActiveConnectionIDLimit
	return ids.newLocal(ev)
}

// initClient sets up a client: its own first connection ID, and the
// random Destination Connection ID used until the server answers.
func (ids *connIDs) initClient(cfg *Config, ev *eventQueue, dcid wire.ConnectionID) error {
	if err := ids.init(cfg, ev); err != nil {
		return err
	}
	ids.peer = []peerCID{{seq: 0, id: dcid}}
	return nil
}

// initServer sets up a server's first connection ID; the client's is
// learned from its Initial packet.
func (ids *connIDs) initServer(cfg *Config, ev *eventQueue) error {
	return ids.init(cfg, ev)
}

// newLocal issues one more connection ID with its reset token.
func (ids *connIDs) newLocal(ev *eventQueue) error {
	id, err := ids.draw()
	if err != nil {
		return err
	}
	l := localCID{seq: ids.nextSeq, id: id}
	if ids.resetKey != nil {
		tok, err := ids.resetKey.Token(id.Bytes())
		if err != nil {
			return err
		}
		l.token = tok
	} else if _, err := io.ReadFull(ids.rand, l.token[:]); err != nil {
		return err
	}
	ids.nextSeq++
	ids.local = append(ids.local, l)
	ev.push(Event{Kind: EventConnIDIssued, ConnID: id})
	return nil
}

// issue announces new connection IDs up to the peer's limit, once 1-RTT
// packets can carry them (RFC 9000 section 5.1.1).
func (ids *connIDs) issue(ev *eventQueue) error {
	limit := min(ids.peerLimit, maxIssuedConnIDs)
	for uint64(len(ids.local)) < limit {
		if err := ids.newLocal(ev); err != nil {
			return transportError(wire.CodeInternalError, 0, "issuing a connection ID: %v", err)
		}
		ids.announce = append(ids.announce, ids.nextSeq-1)
	}
	return nil
}

// isLocalID reports whether id is one of the connection IDs this endpoint
// issued and has not retired.
func (ids *connIDs) isLocalID(id wire.ConnectionID) bool {
	for i := range ids.local {
		if ids.local[i].id == id {
			return true
		}
	}
	return false
}

// localBySeq returns the issued connection ID with sequence number seq.
func (ids *connIDs) localBySeq(seq uint64) *localCID {
	for i := range ids.local {
		if ids.local[i].seq == seq {
			return &ids.local[i]
		}
	}
	return nil
}

// dcid is the Destination Connection ID of the packets we send.
func (ids *connIDs) dcid() wire.ConnectionID { return ids.peer[0].id }

// setPeerInitial records the Source Connection ID of the peer's first
// Initial packet: the client switches its Destination Connection ID to it
// (RFC 9000 section 7.2), the server learns the client's.
func (ids *connIDs) setPeerInitial(scid wire.ConnectionID) {
	ids.peerInitialSCID = scid
	ids.peer = []peerCID{{seq: 0, id: scid}}
}

// setPeerResetToken installs the server's stateless_reset_token for its
// first connection ID (RFC 9000 section 18.2).
func (ids *connIDs) setPeerResetToken(tok wire.StatelessResetToken) {
	for i := range ids.peer {
		if ids.peer[i].seq == 0 {
			ids.peer[i].token, ids.peer[i].hasToken = tok, true
		}
	}
}

// onNewConnectionID handles a NEW_CONNECTION_ID frame (RFC 9000 section
// 19.15).
func (ids *connIDs) onNewConnectionID(f *wire.NewConnectionIDFrame) error {
	ft := wire.FrameTypeNewConnectionID
	if ids.peer[0].id.Len() == 0 {
		return transportError(wire.CodeProtocolViolation, ft, "NEW_CONNECTION_ID from a peer using zero-length connection IDs")
	}
	for i := range ids.peer {
		p := &ids.peer[i]
		sameSeq, sameID := p.seq == f.SequenceNumber, p.id == f.ConnectionID
		if sameSeq && sameID && (!p.hasToken || p.token == f.StatelessResetToken) {
			ids.retireBelow(f.RetirePriorTo)
			return nil
		}
		if sameSeq || sameID {
			return transportError(wire.CodeProtocolViolation, ft, "connection ID sequence %d reissued differently", f.SequenceNumber)
		}
	}
	if f.SequenceNumber < ids.retirePriorTo {
		// Already retired by an earlier Retire Prior To: retire it at
		// once without using it.
		ids.queueRetire(f.SequenceNumber)
		return nil
	}
	p := peerCID{seq: f.SequenceNumber, id: f.ConnectionID, token: f.StatelessResetToken, hasToken: true}
	i, _ := slices.BinarySearchFunc(ids.peer, p.seq, func(a peerCID, s uint64) int { return cmpUint(a.seq, s) })
	ids.peer = slices.Insert(ids.peer, i, p)
	ids.retireBelow(f.RetirePriorTo)
	if uint64(len(ids.peer)) > ids.limit {
		return transportError(wire.CodeConnectionIDLimitError, ft, "%d active connection IDs, limit %d", len(ids.peer), ids.limit)
	}
	return nil
}

// retireBelow retires the peer's connection IDs below rpt (Retire Prior
// To); the one in use moves to the lowest that remains.
func (ids *connIDs) retireBelow(rpt uint64) {
	if rpt <= ids.retirePriorTo {
		return
	}
	ids.retirePriorTo = rpt
	keep := ids.peer[:0]
	for _, p := range ids.peer {
		if p.seq < rpt {
			ids.queueRetire(p.seq)
			continue
		}
		keep = append(keep, p)
	}
	ids.peer = keep
}

func (ids *connIDs) queueRetire(seq uint64) {
	if !slices.Contains(ids.retire, seq) {
		ids.retire = append(ids.retire, seq)
	}
}

// onRetireConnectionID handles a RETIRE_CONNECTION_ID frame (RFC 9000
// section 19.16); dcid is the Destination Connection ID of the packet
// that carried it.
func (ids *connIDs) onRetireConnectionID(ev *eventQueue, seq uint64, dcid wire.ConnectionID) error {
	ft := wire.FrameTypeRetireConnectionID
	if seq >= ids.nextSeq {
		return transportError(wire.CodeProtocolViolation, ft, "retiring connection ID %d never issued", seq)
	}
	l := ids.localBySeq(seq)
	if l == nil {
		return nil // retired before
	}
	if l.id == dcid {
		return transportError(wire.CodeProtocolViolation, ft, "retiring the connection ID of the packet itself")
	}
	id := l.id
	ids.local = slices.DeleteFunc(ids.local, func(x localCID) bool { return x.seq == seq })
	ids.announce = slices.DeleteFunc(ids.announce, func(s uint64) bool { return s == seq })
	ev.push(Event{Kind: EventConnIDRetired, ConnID: id})
	return ids.issue(ev)
}

// matchesReset reports whether the datagram tail is the reset token of
// one of the peer's connection IDs (RFC 9000 section 10.3.1).
func (ids *connIDs) matchesReset(tail []byte) bool {
	if len(tail) != wire.StatelessResetTokenLen {
		return false
	}
	found := 0
	for i := range ids.peer {
		if ids.peer[i].hasToken {
			found |= subtle.ConstantTimeCompare(ids.peer[i].token[:], tail)
		}
	}
	return found == 1
}

// PeerResetTokens appends to dst the stateless reset tokens of the peer's
// connection IDs that have not been retired: its stateless_reset_token
// transport parameter, its NEW_CONNECTION_ID frames' and its
// preferred_address's (RFC 9000 section 10.3.1). They are what a
// Stateless Reset from the peer ends with. There are at most
// Config.ActiveConnIDLimit of them, as many as the peer's connection IDs
// this endpoint keeps; a token given twice is listed twice.
func (c *Conn) PeerResetTokens(dst []wire.StatelessResetToken) []wire.StatelessResetToken {
	// Room for as many as there may be (onNewConnectionID holds them to
	// the limit): a driver that reuses dst allocates once.
	dst = slices.Grow(dst, max(len(c.cids.peer), int(c.cids.limit)))
	for i := range c.cids.peer {
		if p := &c.cids.peer[i]; p.hasToken {
			dst = append(dst, p.token)
		}
	}
	return dst
}

// LocalConnIDs returns the connection IDs that route to this connection:
// the driver's demultiplexing keys. A server's connection also answers to
// the client's original Destination Connection ID until the handshake is
// confirmed (see OriginalDestConnID).
func (c *Conn) LocalConnIDs() []wire.ConnectionID { return c.cids.localIDs() }

// OriginalDestConnID is the client's first Destination Connection ID.
func (c *Conn) OriginalDestConnID() wire.ConnectionID { return c.origDCID }

// ResetToken returns the stateless reset token this endpoint gave for id:
// a driver that no longer has the connection sends it in a Stateless Reset
// (RFC 9000 section 10.3).
func (c *Conn) ResetToken(id wire.ConnectionID) (wire.StatelessResetToken, bool) {
	return c.cids.resetToken(id)
}

// localIDs returns the connection IDs this endpoint issued and has not
// retired.
func (ids *connIDs) localIDs() []wire.ConnectionID {
	out := make([]wire.ConnectionID, len(ids.local))
	for i := range ids.local {
		out[i] = ids.local[i].id
	}
	return out
}

// resetToken returns the reset token issued with id.
func (ids *connIDs) resetToken(id wire.ConnectionID) (wire.StatelessResetToken, bool) {
	for i := range ids.local {
		if ids.local[i].id == id {
			return ids.local[i].token, true
		}
	}
	return wire.StatelessResetToken{}, false
}

// draw makes a connection ID to issue: Config.NewConnID's, or a random
// one.
func (ids *connIDs) draw() (wire.ConnectionID, error) {
	if ids.newID == nil {
		return drawConnID(ids.rand, ids.idLen)
	}
	var b [wire.MaxConnectionIDLen]byte
	if err := ids.newID(b[:ids.idLen], ids.rand); err != nil {
		return wire.ConnectionID{}, fmt.Errorf("quic core: connection ID: %w", err)
	}
	return wire.NewConnectionID(b[:ids.idLen])
}

// drawConnID draws a connection ID of n bytes from r.
func drawConnID(r io.Reader, n int) (wire.ConnectionID, error) {
	var b [wire.MaxConnectionIDLen]byte
	if _, err := io.ReadFull(r, b[:n]); err != nil {
		return wire.ConnectionID{}, fmt.Errorf("quic core: random connection ID: %w", err)
	}
	return wire.NewConnectionID(b[:n])
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// resetTokenLen is re-exported for the size checks of the receive path.
const resetTokenLen = crypto.ResetTokenLen
