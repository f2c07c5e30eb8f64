package core

import (
	"crypto/tls"
	"errors"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// drainTLS handles every event crypto/tls's QUICConn has ready (RFC 9001
// section 4.1.3): new secrets, handshake bytes to send in CRYPTO frames, the
// peer's transport parameters, and the end of the handshake.
func (c *Conn) drainTLS() {
	for c.state == stateActive {
		ev := c.tls.NextEvent()
		switch ev.Kind {
		case tls.QUICNoEvent:
			return
		case tls.QUICSetReadSecret:
			c.installSecret(ev, false)
		case tls.QUICSetWriteSecret:
			c.installSecret(ev, true)
		case tls.QUICWriteData:
			if s, ok := spaceOfLevel(ev.Level); ok {
				c.spaces[s].cryptoSend.write(ev.Data)
			}
		case tls.QUICTransportParameters:
			c.onPeerParams(ev.Data)
		case tls.QUICTransportParametersRequired:
			raw, err := c.localParams.Append(nil, c.perspective())
			if err != nil {
				c.closeLocal(transportError(wire.CodeInternalError, 0, "transport parameters: %v", err))
				return
			}
			c.tls.SetTransportParameters(raw)
		case tls.QUICHandshakeDone:
			c.onHandshakeComplete()
		case tls.QUICErrorEvent:
			c.closeTLSError(ev.Err)
		case tls.QUICResumeSession:
			c.onResumeSession(ev.SessionState)
		case tls.QUICStoreSession:
			c.onStoreSession(ev.SessionState)
		case tls.QUICRejectedEarlyData:
			c.onEarlyDataRejected()
		}
	}
}

// installSecret turns a TLS traffic secret into packet protection keys
// (RFC 9001 section 5.1).
func (c *Conn) installSecret(ev tls.QUICEvent, write bool) {
	if ev.Level == tls.QUICEncryptionLevelEarly {
		c.installEarlySecret(ev, write)
		return
	}
	s, ok := spaceOfLevel(ev.Level)
	if !ok {
		return
	}
	v := crypto.Version(c.version)
	var err error
	if s == spaceApp {
		var k *crypto.AppKeys
		if k, err = crypto.NewAppKeys(ev.Suite, ev.Data, v); err == nil {
			if write {
				c.appWrite = k
				c.onAppWriteKeys()
			} else {
				c.appRead = k
			}
		}
	} else {
		var k *crypto.Keys
		if k, err = crypto.New(ev.Suite, ev.Data, v); err == nil {
			if write {
				c.spaces[s].write = k
			} else {
				c.spaces[s].read = k
			}
		}
	}
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "installing %v keys: %v", ev.Level, err))
		return
	}
	if s == spaceHandshake && write {
		c.sender.SetHandshakeKeys(c.now)
	}
}

// onCryptoData hands in-order CRYPTO bytes of a space to TLS.
func (c *Conn) onCryptoData(s recovery.Space) {
	buf := &c.spaces[s].cryptoRecv
	for c.state == stateActive {
		data := buf.next()
		if data == nil {
			return
		}
		err := c.tls.HandleData(levelOfSpace(s), data)
		buf.consume(len(data))
		if err != nil {
			c.closeTLSError(err)
			return
		}
		c.drainTLS()
	}
}

// closeTLSError closes the connection for a TLS failure: an alert becomes
// a CRYPTO_ERROR code (RFC 9001 section 4.8).
func (c *Conn) closeTLSError(err error) {
	var alert tls.AlertError
	code := wire.CodeInternalError
	if errors.As(err, &alert) {
		code = wire.CryptoErrorCode(uint8(alert))
	}
	c.closeLocal(transportError(code, 0, "TLS: %v", err))
}

// onHandshakeComplete runs when TLS reports the handshake done (RFC 9001
// section 4.1.1).
func (c *Conn) onHandshakeComplete() {
	c.handshakeComplete = true
	if err := c.onEarlyHandshakeDone(); err != nil {
		c.closeWithError(err)
		return
	}
	c.events.push(Event{Kind: EventHandshakeComplete})
	if !c.isClient {
		// Section 4.1.2: the server's handshake is confirmed when it
		// completes; it tells the client with HANDSHAKE_DONE.
		c.handshakeDonePend = true
		c.confirmHandshake()
		c.sendSessionTicket()
		c.issueNewToken()
	}
	if err := c.cids.issue(&c.events); err != nil {
		c.closeWithError(err)
	}
}

// sendSessionTicket gives the client a ticket for a later connection,
// unless the TLS configuration disables tickets.
func (c *Conn) sendSessionTicket() {
	if c.cfg.TLS.SessionTicketsDisabled {
		return
	}
	if err := c.tls.SendSessionTicket(c.ticketOptions()); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "session ticket: %v", err))
	}
}

// confirmHandshake marks the handshake confirmed and discards the
// Handshake keys (RFC 9001 section 4.9.2).
func (c *Conn) confirmHandshake() {
	if c.handshakeConfirmed {
		return
	}
	c.handshakeConfirmed = true
	c.sender.ConfirmHandshake(c.now)
	if !c.deferHandshakeDiscard() {
		c.dropSpace(spaceHandshake)
	}
	c.events.push(Event{Kind: EventHandshakeConfirmed})
}

// dropSpace discards the keys and state of the Initial or Handshake space
// (RFC 9001 section 4.9, RFC 9002 section 6.4).
func (c *Conn) dropSpace(s recovery.Space) {
	sp := c.spaces[s]
	if sp.discarded {
		return
	}
	if _, err := c.sender.DiscardSpace(c.now, s); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "discarding %v space: %v", s, err))
		return
	}
	// The CRYPTO data still held goes back to the block pools.
	sp.cryptoSend.release()
	sp.cryptoRecv.releaseBlocks()
	*sp = pnSpace{id: s, discarded: true, largestAcked: wire.InvalidPacketNumber}
}

// onPeerParams parses, authenticates and applies the peer's transport
// parameters (RFC 9000 sections 7.3, 7.4 and 18).
func (c *Conn) onPeerParams(raw []byte) {
	sender := wire.PerspectiveServer
	if !c.isClient {
		sender = wire.PerspectiveClient
	}
	p, err := wire.ParseTransportParameters(raw, sender)
	if err != nil {
		c.closeWithError(err)
		return
	}
	if err := c.authenticateConnIDs(&p); err != nil {
		c.closeWithError(err)
		return
	}
	if err := c.checkPeerVersionInfo(&p); err != nil {
		c.closeWithError(err)
		return
	}
	c.peerParams, c.hasPeer = p, true
	c.applyPeerParams(&p)
	if err := c.startFECSender(&p); err != nil {
		c.closeWithError(err)
		return
	}
	c.onEarlyPeerParams()
}

// authenticateConnIDs checks that the connection IDs in the transport
// parameters match those of the packets (RFC 9000 section 7.3), which
// authenticates the connection IDs the handshake used.
func (c *Conn) authenticateConnIDs(p *wire.TransportParameters) error {
	peerSCID := c.cids.peerInitialSCID
	if *p.InitialSourceConnectionID != peerSCID {
		return transportError(wire.CodeTransportParameterError, 0,
			"initial_source_connection_id %v does not match the Source Connection ID %v", *p.InitialSourceConnectionID, peerSCID)
	}
	if !c.isClient {
		return nil
	}
	if *p.OriginalDestinationConnectionID != c.origDCID {
		return transportError(wire.CodeTransportParameterError, 0,
			"original_destination_connection_id %v does not match %v", *p.OriginalDestinationConnectionID, c.origDCID)
	}
	return c.checkRetrySourceConnID(p)
}

// applyPeerParams puts the peer's limits in force.
func (c *Conn) applyPeerParams(p *wire.TransportParameters) {
	if err := c.sender.SetPeerMaxAckDelay(c.now, p.MaxAckDelay()); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "max_ack_delay: %v", err))
		return
	}
	c.flow.sendMax = p.InitialMaxData
	c.streams.onPeerParams(p)
	if mds := int(min(p.MaxUDPPayloadSize, uint64(c.cfg.MaxDatagramSize))); mds < c.maxDatagram {
		c.maxDatagram = mds
		if err := c.sender.SetMaxDatagramSize(mds); err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "max_udp_payload_size: %v", err))
			return
		}
	}
	c.idle.setPeer(p.MaxIdleTimeout())
	if p.StatelessResetToken != nil {
		c.cids.setPeerResetToken(*p.StatelessResetToken)
	}
	c.cids.peerLimit = p.ActiveConnectionIDLimit
}

// buildLocalParams returns the transport parameters this endpoint sends.
func (c *Conn) buildLocalParams() wire.TransportParameters {
	p := wire.DefaultTransportParameters()
	p.MaxIdleTimeoutMs = uint64(c.cfg.IdleTimeout.Milliseconds())
	// What the driver can receive, not what this endpoint sends: the
	// peer's path MTU discovery stops there (RFC 9000 section 18.2).
	p.MaxUDPPayloadSize = uint64(c.cfg.MaxReceiveDatagramSize)
	p.InitialMaxData = c.flow.recv.limit
	p.InitialMaxStreamDataBidiLocal = c.cfg.InitialStreamReceiveWindow
	p.InitialMaxStreamDataBidiRemote = c.cfg.InitialStreamReceiveWindow
	p.InitialMaxStreamDataUni = c.cfg.InitialStreamReceiveWindow
	p.InitialMaxStreamsBidi = c.cfg.MaxIncomingStreamsBidi
	p.InitialMaxStreamsUni = c.cfg.MaxIncomingStreamsUni
	p.AckDelayExponent = uint64(c.cfg.AckDelayExponent)
	p.MaxAckDelayMs = uint64((c.cfg.MaxAckDelay + time.Millisecond - 1) / time.Millisecond)
	p.ActiveConnectionIDLimit = c.cfg.ActiveConnIDLimit
	p.DisableActiveMigration = true
	p.VersionInformation = c.vn.localInfo(c.version)
	scid := c.cids.local[0].id
	p.InitialSourceConnectionID = &scid
	c.addFECParam(&p)
	if !c.isClient {
		odcid := c.origDCID
		p.OriginalDestinationConnectionID = &odcid
		tok := c.cids.local[0].token
		p.StatelessResetToken = &tok
		if c.retry.done {
			rscid := c.retry.scid
			p.RetrySourceConnectionID = &rscid
		}
	}
	return p
}

// onHandshakeDoneFrame handles HANDSHAKE_DONE, which only a server sends
// (RFC 9000 section 19.20).
func (c *Conn) onHandshakeDoneFrame() error {
	if !c.isClient {
		return transportError(wire.CodeProtocolViolation, wire.FrameTypeHandshakeDone, "HANDSHAKE_DONE from a client")
	}
	c.confirmHandshake()
	return nil
}

// closeWithError closes the connection for an error found while
// processing input: a *wire.TransportError carries its code; anything else
// is an INTERNAL_ERROR.
func (c *Conn) closeWithError(err error) {
	var te *wire.TransportError
	if errors.As(err, &te) {
		c.closeLocal(te)
		return
	}
	c.closeLocal(transportError(wire.CodeInternalError, 0, "%v", err))
}
