package core

import (
	"crypto/tls"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// The packet number spaces (RFC 9000 section 12.3), indexed as
// recovery.Space: Initial, Handshake, and Application (0-RTT and 1-RTT).
const (
	spaceInitial   = recovery.SpaceInitial
	spaceHandshake = recovery.SpaceHandshake
	spaceApp       = recovery.SpaceApplication
	numSpaces      = 3
)

// pnSpace is the state of one packet number space: its keys (the
// application space's live in Conn because they update), packet numbers,
// received packets, CRYPTO streams and sent-frame records.
type pnSpace struct {
	id    recovery.Space
	read  *crypto.Keys // Initial and Handshake only
	write *crypto.Keys

	nextPN uint64
	// largestAcked is the largest of our packet numbers the peer
	// acknowledged, for packet number encoding (RFC 9000 section 17.1).
	largestAcked uint64

	acks       ackState
	cryptoSend sendBuffer
	cryptoRecv recvBuffer
	sent       sentLog

	discarded bool
}

func newSpace(id recovery.Space) *pnSpace {
	return &pnSpace{id: id, largestAcked: wire.InvalidPacketNumber}
}

// onCryptoFrame buffers the handshake data of a CRYPTO frame (RFC 9000
// section 19.6) for TLS, which handshake.go feeds. Data more than
// maxBuffer bytes beyond what TLS consumed is refused (section 7.5).
func (sp *pnSpace) onCryptoFrame(f *wire.CryptoFrame, maxBuffer int) error {
	end := f.Offset + uint64(len(f.Data))
	if end > sp.cryptoRecv.readOff+uint64(maxBuffer) {
		return transportError(wire.CodeCryptoBufferExceeded, wire.FrameTypeCrypto, "CRYPTO data up to %d, %d read", end, sp.cryptoRecv.readOff)
	}
	sp.cryptoRecv.push(f.Offset, f.Data)
	return nil
}

// spaceOfLevel maps a TLS encryption level to its packet number space;
// ok is false for 0-RTT: its keys are the earlyState's (early.go), and no
// CRYPTO data goes at that level (RFC 9001 section 8.3).
func spaceOfLevel(l tls.QUICEncryptionLevel) (recovery.Space, bool) {
	switch l {
	case tls.QUICEncryptionLevelInitial:
		return spaceInitial, true
	case tls.QUICEncryptionLevelHandshake:
		return spaceHandshake, true
	case tls.QUICEncryptionLevelApplication:
		return spaceApp, true
	}
	return 0, false
}

// levelOfSpace is the TLS encryption level whose CRYPTO data a space
// carries.
func levelOfSpace(s recovery.Space) tls.QUICEncryptionLevel {
	switch s {
	case spaceInitial:
		return tls.QUICEncryptionLevelInitial
	case spaceHandshake:
		return tls.QUICEncryptionLevelHandshake
	}
	return tls.QUICEncryptionLevelApplication
}

// packetTypeOfSpace is the packet type a space sends: 1-RTT for the
// application space, whose packets are 0-RTT only while a client has
// 0-RTT keys (the packet writer and the qlog tell those apart).
func packetTypeOfSpace(s recovery.Space) wire.PacketType {
	switch s {
	case spaceInitial:
		return wire.PacketTypeInitial
	case spaceHandshake:
		return wire.PacketTypeHandshake
	}
	return wire.PacketType1RTT
}

// spaceOfPacketType maps a received packet type to its space.
func spaceOfPacketType(t wire.PacketType) (recovery.Space, bool) {
	switch t {
	case wire.PacketTypeInitial:
		return spaceInitial, true
	case wire.PacketTypeHandshake:
		return spaceHandshake, true
	case wire.PacketType1RTT, wire.PacketType0RTT:
		return spaceApp, true
	}
	return 0, false
}
