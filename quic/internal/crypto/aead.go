package crypto

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"slices"
)

// MaxPacketNumber is the largest QUIC packet number (RFC 9000 section 12.3).
const MaxPacketNumber uint64 = 1<<62 - 1

// PacketKey is the AEAD key and IV of one direction at one encryption level
// and key phase (RFC 9001 section 5.3). It counts the packets it seals so
// that the core can update keys before the confidentiality limit.
type PacketKey struct {
	// aead is built from key by suite.newAEAD; DropCipher frees it and
	// the next Seal or Open builds it again.
	aead  cipher.AEAD
	suite *suite
	key   []byte
	iv    [ivLen]byte
	nonce [ivLen]byte // per-packet scratch, kept here so it never escapes to the heap
	// sealed counts packets protected with this key; limit is the suite's
	// confidentiality limit.
	sealed uint64
	limit  uint64
}

// newPacketKey derives the AEAD key ("quic key") and IV ("quic iv") from a
// traffic secret, through its expander (RFC 9001 section 5.1).
func newPacketKey(s *suite, p *versionParams, secret *expander) (*PacketKey, error) {
	key, err := secret.expandLabel(p.keyLabel, s.keyLen)
	if err != nil {
		return nil, err
	}
	iv, err := secret.expandLabel(p.ivLabel, ivLen)
	if err != nil {
		return nil, err
	}
	aead, err := s.newAEAD(key)
	if err != nil {
		return nil, err
	}
	if aead.NonceSize() != ivLen || aead.Overhead() != TagLen {
		return nil, fmt.Errorf("%w: AEAD nonce %d bytes, tag %d bytes", ErrUnknownSuite, aead.NonceSize(), aead.Overhead())
	}
	k := &PacketKey{aead: aead, suite: s, key: key, limit: s.confidentialityLimit}
	copy(k.iv[:], iv)
	return k, nil
}

// nonceFor forms the AEAD nonce: the IV XOR the packet number, left-padded
// with zeros to the IV length in network byte order (RFC 9001 section 5.3).
func (k *PacketKey) nonceFor(pn uint64) []byte {
	k.nonce = k.iv
	tail := binary.BigEndian.Uint64(k.iv[ivLen-8:]) ^ pn
	binary.BigEndian.PutUint64(k.nonce[ivLen-8:], tail)
	return k.nonce[:]
}

// Seal protects a packet in place. packet[:hdrLen] is the header up to and
// including the unprotected packet number: it is the associated data.
// packet[hdrLen:] is the plaintext payload, encrypted in place. The result
// is packet grown by TagLen bytes; give packet that much spare capacity and
// Seal does not allocate. Header protection comes after (see [HeaderKey]).
func (k *PacketKey) Seal(packet []byte, hdrLen int, pn uint64) ([]byte, error) {
	if hdrLen < 1 || hdrLen > len(packet) {
		return nil, fmt.Errorf("%w: header length %d, packet %d bytes", ErrBadOffset, hdrLen, len(packet))
	}
	if pn > MaxPacketNumber {
		return nil, fmt.Errorf("%w: %d", ErrPacketNumber, pn)
	}
	// RFC 9001 section 6.6: a key that reached its confidentiality limit
	// MUST NOT protect more packets.
	if k.sealed >= k.limit {
		return nil, ErrKeyExhausted
	}
	if err := k.buildCipher(); err != nil {
		return nil, err
	}
	packet = slices.Grow(packet, TagLen)
	hdr, payload := packet[:hdrLen], packet[hdrLen:]
	out := k.aead.Seal(payload[:0], k.nonceFor(pn), payload, hdr)
	k.sealed++
	return packet[:hdrLen+len(out)], nil
}

// Open removes packet protection in place. packet[:hdrLen] is the header
// with header protection already removed; packet[hdrLen:] is the ciphertext
// and tag. It returns the plaintext payload, which aliases packet[hdrLen:].
//
// A packet that fails authentication gives [ErrAuthentication] and its
// payload bytes are overwritten: a packet is opened with one key, chosen
// from its header (see [AppKeys.Select]), never tried with several.
func (k *PacketKey) Open(packet []byte, hdrLen int, pn uint64) ([]byte, error) {
	if hdrLen < 1 || hdrLen > len(packet) {
		return nil, fmt.Errorf("%w: header length %d, packet %d bytes", ErrBadOffset, hdrLen, len(packet))
	}
	if len(packet)-hdrLen < TagLen {
		return nil, fmt.Errorf("%w: %d payload bytes, tag alone is %d", ErrPacketTooShort, len(packet)-hdrLen, TagLen)
	}
	if pn > MaxPacketNumber {
		return nil, fmt.Errorf("%w: %d", ErrPacketNumber, pn)
	}
	if err := k.buildCipher(); err != nil {
		return nil, err
	}
	hdr, ct := packet[:hdrLen], packet[hdrLen:]
	pt, err := k.aead.Open(ct[:0], k.nonceFor(pn), ct, hdr)
	if err != nil {
		// Unwrapped on purpose: forged packets are cheap to send, so
		// rejecting one must not allocate.
		return nil, ErrAuthentication
	}
	return pt, nil
}

// Sealed returns how many packets this key has protected.
func (k *PacketKey) Sealed() uint64 { return k.sealed }

// ConfidentialityLimit returns how many packets this key may protect
// (RFC 9001 section 6.6).
func (k *PacketKey) ConfidentialityLimit() uint64 { return k.limit }

// DropCipher frees the AEAD's expanded state (for AES-GCM the round keys
// and the GHASH table, most of a key's memory), keeping the key it is
// built from: the next Seal or Open builds it again. A connection that
// goes idle drops its ciphers.
func (k *PacketKey) DropCipher() { k.aead = nil }

// buildCipher builds the AEAD again after DropCipher.
func (k *PacketKey) buildCipher() error {
	if k.aead != nil {
		return nil
	}
	aead, err := k.suite.newAEAD(k.key)
	if err != nil {
		return fmt.Errorf("quic crypto: rebuilding a packet key: %w", err)
	}
	k.aead = aead
	return nil
}
