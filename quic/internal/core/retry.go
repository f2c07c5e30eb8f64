package core

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// retryState is a connection's part of address validation with Retry and
// tokens (RFC 9000 sections 8.1 and 17.2.5).
type retryState struct {
	// done: a client accepted a Retry (only one is, section 17.2.5.2);
	// a server's client answered one.
	done bool
	// scid is the Source Connection ID of the Retry packet: the
	// Destination Connection ID of the Initials that follow it.
	scid wire.ConnectionID
	// token is what a client's Initial packets carry: the Retry's token,
	// or one from a NEW_TOKEN frame of an earlier connection.
	token []byte
	// started is when a client started, for the RTT the Retry measures.
	started time.Duration
}

// initialDCID is the Destination Connection ID that keys the Initial
// packets (RFC 9001 section 5.2): the client's first one, orig, or after a
// Retry the one the Retry chose.
func (r *retryState) initialDCID(orig wire.ConnectionID) wire.ConnectionID {
	if r.done {
		return r.scid
	}
	return orig
}

// InitialDestConnID is the Destination Connection ID of the client's
// Initial packets: OriginalDestConnID, or after a Retry the Retry's Source
// Connection ID. A server's driver routes it to the connection until the
// handshake is confirmed.
func (c *Conn) InitialDestConnID() wire.ConnectionID { return c.retry.initialDCID(c.origDCID) }

// accept checks a Retry packet at a client (RFC 9000 section 17.2.5.2) and
// takes its connection ID and token: one is accepted, if it names the
// client's connection ID local, chose a new one in place of orig, the
// client's first, and its integrity tag verifies (RFC 9001 section 5.8).
func (r *retryState) accept(pkt []byte, h *wire.LongHeader, local, orig wire.ConnectionID, v wire.Version) bool {
	if r.done || h.DstConnID != local || h.SrcConnID == orig || len(h.Token) == 0 {
		return false
	}
	if err := crypto.VerifyRetry(pkt, orig.Bytes(), crypto.Version(v)); err != nil {
		return false
	}
	r.done = true
	r.scid = h.SrcConnID
	r.token = append([]byte(nil), h.Token...)
	return true
}

// onRetry handles a Retry packet that arrived at a client at now: once one
// is accepted, before any other packet from the server, the client keys
// its Initials with the new connection ID and puts the token in them. The
// server processed none of the packets sent so far: loss recovery starts
// again, with the time to the Retry as its first RTT estimate, and their
// content is queued again for the first flight (RFC 9002 section 6.3);
// packet numbers go on.
func (c *Conn) onRetry(now time.Duration, pkt []byte, h *wire.LongHeader) bool {
	if !c.isClient || c.stats.PacketsReceived > 0 || !c.retry.accept(pkt, h, c.cids.local[0].id, c.origDCID, c.version) {
		return false
	}
	c.cids.peer[0].id = h.SrcConnID
	if err := c.spaces[spaceInitial].installInitialKeys(h.SrcConnID, c.version, c.isClient); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "Initial keys after Retry: %v", err))
		return true
	}
	sender, err := newClientSender(&c.cfg, now-c.retry.started, &c.pmtu)
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "loss recovery after Retry: %v", err))
		return true
	}
	c.sender = sender
	for _, s := range []*pnSpace{c.spaces[spaceInitial], c.spaces[spaceApp]} {
		s.sent.each(func(_ uint64, frames []sentFrame) bool {
			for _, f := range frames {
				c.onFrameLost(s, f)
			}
			return true
		})
		s.sent = sentLog{}
	}
	c.spaces[spaceInitial].cryptoSend.requeueUnacked()
	return true
}

// newClientSender starts a client's loss recovery again from a first RTT
// estimate, when it is positive, in place of the configured one. Like the
// first Sender, it reports the fate of each packet to observer, the path
// MTU search, which otherwise never learns of its probes.
func newClientSender(cfg *Config, initialRTT time.Duration, observer recovery.PacketObserver) (*recovery.Sender, error) {
	rc := cfg.recoveryConfig(false)
	if initialRTT > 0 {
		rc.InitialRTT = initialRTT
	}
	s, err := recovery.New(rc)
	if err != nil {
		return nil, err
	}
	s.SetPacketObserver(observer)
	return s, nil
}

// checkParams checks the connection IDs that the server's transport
// parameters echo to a client (RFC 9000 section 7.3):
// original_destination_connection_id is orig, the client's first
// Destination Connection ID; retry_source_connection_id is present and
// equal to the Retry's Source Connection ID after a Retry, absent
// otherwise.
func (r *retryState) checkParams(p *wire.TransportParameters, orig wire.ConnectionID) error {
	if *p.OriginalDestinationConnectionID != orig {
		return transportError(wire.CodeTransportParameterError, 0,
			"original_destination_connection_id %v does not match %v", *p.OriginalDestinationConnectionID, orig)
	}
	got := p.RetrySourceConnectionID
	switch {
	case !r.done && got != nil:
		return transportError(wire.CodeTransportParameterError, 0, "retry_source_connection_id without a Retry")
	case r.done && got == nil:
		return transportError(wire.CodeTransportParameterError, 0, "no retry_source_connection_id after a Retry")
	case r.done && *got != r.scid:
		return transportError(wire.CodeTransportParameterError, 0, "retry_source_connection_id %v, the Retry came from %v", *got, r.scid)
	}
	return nil
}

// addParams puts in a server's transport parameters p the connection IDs
// the client checks (checkParams): orig, the client's first Destination
// Connection ID, as original_destination_connection_id, and after a Retry
// its Source Connection ID as retry_source_connection_id (RFC 9000
// section 7.3).
func (r *retryState) addParams(p *wire.TransportParameters, orig wire.ConnectionID) {
	p.OriginalDestinationConnectionID = &orig
	if r.done {
		rscid := r.scid
		p.RetrySourceConnectionID = &rscid
	}
}

// ErrInvalidToken: a client's Initial carried a Retry token that does not
// validate (expired, or issued to another address or version). The client
// will not accept another Retry; RFC 9000 section 8.1.2 has the server
// close with INVALID_TOKEN, which RefuseInitial builds.
var ErrInvalidToken = errors.New("quic: invalid Retry token")

// Token kinds as the first byte of the tokens an AddressValidator makes,
// so that a token that fails its checks is known to be a Retry token
// without opening it; the kind sealed inside must match.
const (
	tokenPrefixRetry    = 'r'
	tokenPrefixNewToken = 'n'
)

// AddressValidator is the stateless part of a server's address validation
// (RFC 9000 section 8.1): it answers first Initials with Retry packets,
// makes the tokens of NEW_TOKEN frames (see Config.AddressValidator) and
// checks the tokens clients bring back. It keeps nothing per client and
// is safe for concurrent use when Rand is.
type AddressValidator struct {
	// Tokens seals and opens the tokens, with a key only the server
	// knows (section 8.1.4).
	Tokens *crypto.TokenProtector
	// Epoch is the wall-clock time of time 0 on the driver's timeline:
	// tokens carry their issue time on the wall clock, so that they
	// outlive the process.
	Epoch time.Time
	// Rand supplies Retry connection IDs and token nonces; nil means
	// crypto/rand.
	Rand io.Reader
	// ConnIDLen is the length of the Source Connection IDs of Retry
	// packets, 8 by default.
	ConnIDLen int
}

func (v *AddressValidator) rand() io.Reader {
	if v.Rand == nil {
		return rand.Reader
	}
	return v.Rand
}

// Retry appends to buf a Retry packet answering the client Initial that
// info describes, received from remote at now (RFC 9000 sections 8.1.2
// and 17.2.5). Its token binds the client's address and keeps the
// client's original Destination Connection ID for the transport
// parameters of the connection that follows.
func (v *AddressValidator) Retry(buf []byte, info InitialInfo, remote netip.AddrPort, now time.Duration) ([]byte, error) {
	n := v.ConnIDLen
	if n == 0 {
		n = DefaultConnIDLen
	}
	if n < 1 || n > wire.MaxConnectionIDLen {
		return buf, fmt.Errorf("%w: Retry connection ID of %d bytes", ErrConfig, n)
	}
	var b [wire.MaxConnectionIDLen]byte
	if _, err := io.ReadFull(v.rand(), b[:n]); err != nil {
		return buf, err
	}
	scid, err := wire.NewConnectionID(b[:n])
	if err != nil {
		return buf, err
	}
	tok, err := v.Tokens.Seal([]byte{tokenPrefixRetry}, crypto.Token{
		Kind: crypto.TokenRetry, Version: crypto.Version(info.Version), Addr: remote,
		IssuedAt: v.Epoch.Add(now), OriginalDCID: info.DstConnID.Bytes(),
	}, v.rand())
	if err != nil {
		return buf, err
	}
	h := wire.LongHeader{Type: wire.PacketTypeRetry, Version: info.Version, DstConnID: info.SrcConnID, SrcConnID: scid, Token: tok}
	pkt, err := wire.AppendLongHeader(nil, &h)
	if err != nil {
		return buf, err
	}
	pkt, err = crypto.AppendRetryTag(pkt, info.DstConnID.Bytes(), crypto.Version(info.Version))
	if err != nil {
		return buf, err
	}
	return append(buf, pkt...), nil
}

// NewToken makes a token for a NEW_TOKEN frame (RFC 9000 section 8.1.3):
// it binds the client's IP address, not its port, which will change.
func (v *AddressValidator) NewToken(remote netip.AddrPort, version wire.Version, now time.Duration) ([]byte, error) {
	return v.Tokens.Seal([]byte{tokenPrefixNewToken}, crypto.Token{
		Kind: crypto.TokenNewToken, Version: crypto.Version(version), Addr: remote, IssuedAt: v.Epoch.Add(now),
	}, v.rand())
}

// Check examines the token of a client's Initial (info.Token), received
// from remote at now, and returns the parameters to accept the connection
// with:
//   - without a token, or with a NEW_TOKEN token that does not validate
//     (section 8.1.3: the server then acts as without one), the address
//     is not validated: the server may answer with Retry instead;
//   - with a valid NEW_TOKEN token, the address is validated;
//   - with a valid Retry token, the address is validated and the
//     connection learns the client's original Destination Connection ID
//     and the Retry's Source Connection ID for its transport parameters
//     (section 7.3);
//   - with a Retry token that does not validate, Check fails with
//     ErrInvalidToken (section 8.1.2).
func (v *AddressValidator) Check(info InitialInfo, remote netip.AddrPort, now time.Duration) (ServerParams, error) {
	p := ServerParams{RemoteAddr: remote, OriginalDestConnID: info.DstConnID, Version: info.Version}
	if len(info.Token) < 2 {
		return p, nil
	}
	kind, sealed := info.Token[0], info.Token[1:]
	t, err := v.Tokens.Open(sealed, remote, crypto.Version(info.Version), v.Epoch.Add(now))
	switch {
	case kind == tokenPrefixNewToken:
		if err == nil && t.Kind == crypto.TokenNewToken {
			p.AddressValidated = true
		}
		return p, nil
	case kind != tokenPrefixRetry:
		return p, nil // not ours: as without a token
	case err != nil:
		return p, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	case t.Kind != crypto.TokenRetry:
		return p, fmt.Errorf("%w: a NEW_TOKEN token posing as a Retry token", ErrInvalidToken)
	}
	odcid, err := wire.NewConnectionID(t.OriginalDCID)
	if err != nil {
		return p, fmt.Errorf("%w: %w", ErrInvalidToken, err)
	}
	p.OriginalDestConnID = odcid
	p.RetrySourceConnID = info.DstConnID
	p.AddressValidated = true
	return p, nil
}
