package core

import (
	"crypto/tls"
	"errors"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// drainTLS handles every event TLS has ready at now (RFC 9001 section
// 4.1.3): new secrets, handshake bytes to send in CRYPTO frames, the
// peer's transport parameters, session tickets, and the end of the
// handshake. Each goes to the part of the connection it concerns.
func (c *Conn) drainTLS(now time.Duration) {
	for c.state == stateActive {
		ev, ok := c.tls.nextEvent()
		if !ok {
			if !c.isClient && c.handshakeComplete {
				// The session ticket's bytes are queued: TLS has
				// nothing more to do for a server.
				c.tls.finish()
			}
			return
		}
		switch ev.Kind {
		case tls.QUICSetReadSecret, tls.QUICSetWriteSecret:
			c.installSecret(now, ev, ev.Kind == tls.QUICSetWriteSecret)
		case tls.QUICWriteData:
			if s, ok := spaceOfLevel(ev.Level); ok {
				c.spaces[s].cryptoSend.write(ev.Data)
			}
		case tls.QUICTransportParameters:
			c.onPeerParams(now, ev.Data)
		case tls.QUICTransportParametersRequired:
			if err := c.tls.setTransportParams(&c.localParams, c.isClient); err != nil {
				c.closeLocal(transportError(wire.CodeInternalError, 0, "transport parameters: %v", err))
			}
		case tls.QUICHandshakeDone:
			c.onHandshakeComplete(now)
		case tls.QUICErrorEvent:
			c.closeLocal(tlsError(ev.Err))
		case tls.QUICResumeSession:
			rtt := c.early.onResumeSession(ev.SessionState, c.isClient, c.cfg.Allow0RTT && !c.vn.switched, c.version, &c.localParams)
			c.bdp.onResumeSession(ev.SessionState, c.isClient)
			if rtt > 0 && c.cfg.ResumeRTT && c.stats.PacketsSent == 0 {
				// Nothing was sent yet: the client starts from the
				// remembered RTT, or from the configured one if that
				// fails.
				if sender, err := newClientSender(&c.cfg, rtt, &c.pmtu); err == nil {
					c.sender = sender
				}
			}
		case tls.QUICStoreSession:
			c.storeSession(ev.SessionState)
		case tls.QUICRejectedEarlyData:
			c.onEarlyDataRejected(now)
		}
	}
}

// installSecret turns a TLS traffic secret into packet protection keys
// (RFC 9001 section 5.1); 0-RTT keys go to the early-data state.
func (c *Conn) installSecret(now time.Duration, ev tls.QUICEvent, write bool) {
	if ev.Level == tls.QUICEncryptionLevelEarly {
		p, err := c.early.installKeys(ev, c.version, write, c.isClient, c.appWrite != nil)
		if err != nil {
			c.closeLocal(transportError(wire.CodeInternalError, 0, "installing 0-RTT keys: %v", err))
		} else if p != nil {
			// 0-RTT data stays within the remembered limits (RFC
			// 9000 section 7.4.1).
			c.flow.sendMax = p.InitialMaxData
			c.streams.onPeerParams(p)
			c.dgram.setPeer(p.MaxDatagramFrameSize)
		}
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
		newKeys := crypto.NewAppKeys
		if write {
			newKeys = crypto.NewSendAppKeys
		}
		if k, err = newKeys(ev.Suite, ev.Data, v); err == nil {
			if write {
				c.appWrite = k
				c.early.onOneRTTKeys()
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
		c.sender.SetHandshakeKeys(now)
	}
}

// onCryptoData hands the in-order CRYPTO bytes of space s, received at
// now, to TLS.
func (c *Conn) onCryptoData(now time.Duration, s recovery.Space) {
	buf := &c.spaces[s].cryptoRecv
	for c.state == stateActive {
		data := buf.next()
		if data == nil {
			return
		}
		err := c.tls.handleData(s, data)
		buf.consume(len(data))
		if err != nil {
			c.closeLocal(tlsError(err))
			return
		}
		c.drainTLS(now)
	}
}

// tlsError is the transport error of a TLS failure: an alert becomes a
// CRYPTO_ERROR code (RFC 9001 section 4.8).
func tlsError(err error) *wire.TransportError {
	var alert tls.AlertError
	code := wire.CodeInternalError
	if errors.As(err, &alert) {
		code = wire.CryptoErrorCode(uint8(alert))
	}
	return transportError(code, 0, "TLS: %v", err)
}

// asTransportError is the transport error that closes the connection for
// an error found while processing input: a *wire.TransportError carries
// its code; anything else is an INTERNAL_ERROR.
func asTransportError(err error) *wire.TransportError {
	var te *wire.TransportError
	if errors.As(err, &te) {
		return te
	}
	return transportError(wire.CodeInternalError, 0, "%v", err)
}

// onHandshakeComplete runs when TLS reports the handshake done at now (RFC
// 9001 section 4.1.1). A server's handshake is then confirmed (section
// 4.1.2): it tells the client with HANDSHAKE_DONE, and gives it a session
// ticket (unless the TLS configuration disables them) and a NEW_TOKEN
// token for later connections.
func (c *Conn) onHandshakeComplete(now time.Duration) {
	c.handshakeComplete = true
	if err := c.early.onHandshakeDone(&c.peerParams); err != nil {
		c.closeLocal(asTransportError(err))
		return
	}
	c.events.push(Event{Kind: EventHandshakeComplete})
	if !c.isClient {
		c.handshakeDonePend = true
		c.confirmHandshake(now)
		if !c.cfg.TLS.SessionTicketsDisabled {
			if err := c.tls.conn.SendSessionTicket(serverTicketOptions(c.cfg.Allow0RTT, c.version, &c.localParams)); err != nil {
				c.closeLocal(transportError(wire.CodeInternalError, 0, "session ticket: %v", err))
			}
		}
		c.newToken.issue(c.cfg.AddressValidator, c.remote, c.version, now)
	}
	if err := c.cids.issue(&c.events); err != nil {
		c.closeLocal(asTransportError(err))
	}
}

// confirmHandshake marks the handshake confirmed at now and discards the
// Handshake keys (RFC 9001 section 4.9.2); a server keeps them for the
// datagram that acknowledges the client's Finished (handshake_discard.go).
func (c *Conn) confirmHandshake(now time.Duration) {
	if c.handshakeConfirmed {
		return
	}
	c.handshakeConfirmed = true
	c.sender.ConfirmHandshake(now)
	if c.isClient || c.spaces[spaceHandshake].discarded {
		c.dropSpace(now, spaceHandshake)
	} else {
		c.hsDiscardPending = true
	}
	c.events.push(Event{Kind: EventHandshakeConfirmed})
}

// dropSpace discards the keys and state of the Initial or Handshake space
// at now (RFC 9001 section 4.9, RFC 9002 section 6.4).
func (c *Conn) dropSpace(now time.Duration, s recovery.Space) {
	sp := c.spaces[s]
	if sp.discarded {
		return
	}
	if _, err := c.sender.DiscardSpace(now, s); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "discarding %v space: %v", s, err))
		return
	}
	// The CRYPTO data still held goes back to the block pools.
	sp.cryptoSend.release()
	sp.cryptoRecv.releaseBlocks()
	*sp = pnSpace{id: s, discarded: true, largestAcked: wire.InvalidPacketNumber}
}

// onPeerParams parses, authenticates and applies the peer's transport
// parameters, received at now (RFC 9000 sections 7.3, 7.4 and 18).
func (c *Conn) onPeerParams(now time.Duration, raw []byte) {
	p, err := wire.ParseTransportParameters(raw, perspective(!c.isClient))
	if err == nil {
		err = checkInitialSourceConnID(&p, c.cids.peerInitialSCID)
	}
	if err == nil && c.isClient {
		err = c.retry.checkParams(&p, c.origDCID)
	}
	if err == nil {
		err = c.checkPeerVersionInfo(&p)
	}
	if err == nil {
		c.peerParams, c.hasPeer = p, true
		c.applyPeerParams(now, &p)
		if c.isClient && p.PreferredAddress != nil {
			err = c.cids.takePreferredConnID(p.PreferredAddress) // preferred.go
		}
	}
	if err == nil {
		err = c.fec.startSender(&p, c.cfg.largestSend())
	}
	if err == nil {
		err = c.bdp.onPeerParams(&p)
	}
	if err == nil {
		err = c.ackFreq.onPeerParams(&p)
	}
	if err != nil {
		c.closeLocal(asTransportError(err))
		return
	}
	if c.isClient && c.early.attempted {
		// The streams opened with the remembered limits move to the
		// new ones.
		c.streams.refreshSendLimits(!c.early.rejected)
	}
}

// checkInitialSourceConnID checks that initial_source_connection_id is
// peerSCID, the Source Connection ID of the peer's first Initial (RFC 9000
// section 7.3), which authenticates the connection IDs the handshake used.
func checkInitialSourceConnID(p *wire.TransportParameters, peerSCID wire.ConnectionID) error {
	if *p.InitialSourceConnectionID != peerSCID {
		return transportError(wire.CodeTransportParameterError, 0,
			"initial_source_connection_id %v does not match the Source Connection ID %v", *p.InitialSourceConnectionID, peerSCID)
	}
	return nil
}

// applyPeerParams puts the peer's limits in force at now.
func (c *Conn) applyPeerParams(now time.Duration, p *wire.TransportParameters) {
	if err := c.sender.SetPeerMaxAckDelay(now, p.MaxAckDelay()); err != nil {
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
	c.dgram.setPeer(p.MaxDatagramFrameSize)
}

// onHandshakeDoneFrame handles HANDSHAKE_DONE, which only a server sends
// (RFC 9000 section 19.20), in a packet received at now.
func (c *Conn) onHandshakeDoneFrame(now time.Duration) error {
	if !c.isClient {
		return transportError(wire.CodeProtocolViolation, wire.FrameTypeHandshakeDone, "HANDSHAKE_DONE from a client")
	}
	c.confirmHandshake(now)
	return nil
}
