package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"

	"golang.org/x/crypto/chacha20"
)

// First-byte bits (RFC 9000 section 17).
const (
	headerFormLong = 0x80
	pnLenMask      = 0x03
	// KeyPhaseBit is the Key Phase bit of a short header's first byte
	// (RFC 9000 section 17.3.1).
	KeyPhaseBit byte = 0x04
	// Header protection covers the reserved bits and the packet number
	// length: four bits in a long header, five (with the key phase) in a
	// short header (RFC 9001 section 5.4.1).
	longHeaderProtected  = 0x0f
	shortHeaderProtected = 0x1f
)

// HeaderKey applies and removes header protection (RFC 9001 section 5.4).
// One header key serves a direction and encryption level for the whole
// connection: key updates leave it unchanged (section 6.1).
type HeaderKey struct {
	// aesKey is the AES key (section 5.4.3), nil for ChaCha20; block is
	// its cipher, which DropCipher frees and the next use builds again.
	aesKey []byte
	block  cipher.Block
	chacha [32]byte // ChaCha20 key (section 5.4.4)
	mask   [SampleLen]byte
}

// newHeaderKey derives the header protection key ("quic hp") from a traffic
// secret, through its expander (RFC 9001 section 5.1). Its length is the
// AEAD key length.
func newHeaderKey(s *suite, p *versionParams, secret *expander) (*HeaderKey, error) {
	key, err := secret.expandLabel(p.hpLabel, s.keyLen)
	if err != nil {
		return nil, err
	}
	h := &HeaderKey{}
	if s.chachaHP {
		copy(h.chacha[:], key)
		return h, nil
	}
	h.aesKey = key
	if err := h.buildCipher(); err != nil {
		return nil, err
	}
	return h, nil
}

// DropCipher frees the AES key schedule, keeping the key: the next use
// builds it again (see [PacketKey.DropCipher]).
func (h *HeaderKey) DropCipher() { h.block = nil }

// buildCipher builds the AES cipher of an AES header key that has none.
func (h *HeaderKey) buildCipher() error {
	if h.aesKey == nil || h.block != nil {
		return nil
	}
	b, err := aes.NewCipher(h.aesKey)
	if err != nil {
		return fmt.Errorf("quic crypto: header protection key: %w", err)
	}
	h.block = b
	return nil
}

// computeMask fills h.mask[:5] from a 16-byte ciphertext sample.
func (h *HeaderKey) computeMask(sample []byte) error {
	if h.aesKey != nil {
		if err := h.buildCipher(); err != nil {
			return err
		}
		// Section 5.4.3: mask = AES-ECB(hp_key, sample).
		h.block.Encrypt(h.mask[:], sample)
		return nil
	}
	// Section 5.4.4: the first 4 sample bytes are the little-endian block
	// counter, the other 12 the nonce; the mask is ChaCha20 applied to
	// five zero bytes.
	c, err := chacha20.NewUnauthenticatedCipher(h.chacha[:], sample[4:SampleLen])
	if err != nil {
		return fmt.Errorf("quic crypto: ChaCha20 header protection: %w", err)
	}
	c.SetCounter(binary.LittleEndian.Uint32(sample[:4]))
	h.mask = [SampleLen]byte{}
	c.XORKeyStream(h.mask[:5], h.mask[:5])
	return nil
}

// sample returns the header protection sample: SampleLen bytes starting
// MaxPacketNumberLen bytes after the packet number offset, as if the packet
// number were 4 bytes long (section 5.4.2). Packets too short for a full
// sample MUST be discarded.
func sample(packet []byte, pnOffset int) ([]byte, error) {
	if pnOffset < 1 || pnOffset >= len(packet) {
		return nil, fmt.Errorf("%w: packet number offset %d, packet %d bytes", ErrBadOffset, pnOffset, len(packet))
	}
	start := pnOffset + MaxPacketNumberLen
	if len(packet) < start+SampleLen {
		return nil, fmt.Errorf("%w: %d bytes, header protection sample needs %d", ErrPacketTooShort, len(packet), start+SampleLen)
	}
	return packet[start : start+SampleLen], nil
}

// protectedBits returns the first-byte bits header protection covers.
func protectedBits(first byte) byte {
	if first&headerFormLong != 0 {
		return longHeaderProtected
	}
	return shortHeaderProtected
}

// Apply protects the header of a sealed packet in place (section 5.4.1).
// pnOffset is the offset of the Packet Number field; the packet number
// length is read from the still unprotected first byte.
func (h *HeaderKey) Apply(packet []byte, pnOffset int) error {
	s, err := sample(packet, pnOffset)
	if err != nil {
		return err
	}
	if err := h.computeMask(s); err != nil {
		return err
	}
	pnLen := int(packet[0]&pnLenMask) + 1
	packet[0] ^= h.mask[0] & protectedBits(packet[0])
	for i := range pnLen {
		packet[pnOffset+i] ^= h.mask[1+i]
	}
	return nil
}

// Remove removes header protection in place (section 5.4.1) and returns the
// packet number length and the truncated packet number as encoded on the
// wire; expanding it to the full packet number (RFC 9000 appendix A.3) is
// the caller's, which then opens the payload with hdrLen = pnOffset + pnLen.
func (h *HeaderKey) Remove(packet []byte, pnOffset int) (pnLen int, truncated uint64, err error) {
	s, err := sample(packet, pnOffset)
	if err != nil {
		return 0, 0, err
	}
	if err := h.computeMask(s); err != nil {
		return 0, 0, err
	}
	// The header form bit is not protected, so the protected bits are
	// known before unmasking; the packet number length is known after.
	packet[0] ^= h.mask[0] & protectedBits(packet[0])
	pnLen = int(packet[0]&pnLenMask) + 1
	for i := range pnLen {
		packet[pnOffset+i] ^= h.mask[1+i]
		truncated = truncated<<8 | uint64(packet[pnOffset+i])
	}
	return pnLen, truncated, nil
}

// KeyPhase returns the Key Phase bit (0 or 1) of an unprotected short
// header's first byte.
func KeyPhase(first byte) uint8 {
	if first&KeyPhaseBit != 0 {
		return 1
	}
	return 0
}

// WithKeyPhase returns a short header's first byte with its Key Phase bit
// set to phase (0 or 1; any other non-zero value counts as 1).
func WithKeyPhase(first byte, phase uint8) byte {
	if phase != 0 {
		return first | KeyPhaseBit
	}
	return first &^ KeyPhaseBit
}
