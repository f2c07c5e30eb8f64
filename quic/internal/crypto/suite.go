package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"fmt"
	"hash"

	"golang.org/x/crypto/chacha20poly1305"
)

// AEAD usage limits of RFC 9001 section 6.6, in packets. The confidentiality
// limit counts packets sealed with one key: the core starts a key update
// before it is reached. The integrity limit counts packets that failed
// authentication over the whole connection, across all keys: reaching it
// closes the connection with AEAD_LIMIT_REACHED.
const (
	// AESGCMConfidentialityLimit applies to AEAD_AES_128_GCM and
	// AEAD_AES_256_GCM (RFC 9001 appendix B.1.1, packets up to 2^16 bytes).
	AESGCMConfidentialityLimit uint64 = 1 << 23
	// AESGCMIntegrityLimit applies to both AES-GCM suites (appendix B.1.2).
	AESGCMIntegrityLimit uint64 = 1 << 52
	// ChaCha20ConfidentialityLimit: the RFC puts the limit above the number
	// of possible packets, so the packet number space (2^62) ends first.
	ChaCha20ConfidentialityLimit uint64 = 1 << 62
	// ChaCha20IntegrityLimit applies to AEAD_CHACHA20_POLY1305.
	ChaCha20IntegrityLimit uint64 = 1 << 36
)

// Sizes shared by every suite QUIC uses (RFC 9001 sections 5.3 and 5.4.2).
const (
	// TagLen is the AEAD expansion: every supported AEAD has a 16-byte tag.
	TagLen = 16
	// SampleLen is the header protection sample length.
	SampleLen = 16
	// MaxPacketNumberLen is the longest packet number encoding; the sample
	// starts this far after the packet number offset.
	MaxPacketNumberLen = 4
	ivLen              = 12
)

// suite is what packet protection needs to know about a TLS 1.3 cipher
// suite.
type suite struct {
	id   uint16
	hash func() hash.Hash
	// sha256: hash is SHA-256, which the expander computes itself
	// (hmac256.go).
	sha256 bool
	keyLen int // AEAD key length, also the header protection key length
	// newAEAD builds the packet protection AEAD from a key of keyLen bytes.
	newAEAD func(key []byte) (cipher.AEAD, error)
	// chachaHP selects ChaCha20 header protection (RFC 9001 section
	// 5.4.4) instead of AES-ECB (section 5.4.3).
	chachaHP             bool
	confidentialityLimit uint64
	integrityLimit       uint64
}

func newAESGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("quic crypto: AES key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("quic crypto: AES-GCM: %w", err)
	}
	return aead, nil
}

func newChaCha20Poly1305(key []byte) (cipher.AEAD, error) {
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		return nil, fmt.Errorf("quic crypto: ChaCha20-Poly1305 key: %w", err)
	}
	return aead, nil
}

func newSHA256() hash.Hash { return sha256.New() }
func newSHA384() hash.Hash { return sha512.New384() }

// The suites of RFC 8446 that QUIC can use. TLS_AES_128_CCM_SHA256 is left
// out: crypto/tls never negotiates it. TLS_AES_128_CCM_8_SHA256 has no
// header protection scheme (RFC 9001 section 5.3).
var (
	suiteAES128GCM = suite{
		id: tls.TLS_AES_128_GCM_SHA256, hash: newSHA256, sha256: true, keyLen: 16, newAEAD: newAESGCM,
		confidentialityLimit: AESGCMConfidentialityLimit, integrityLimit: AESGCMIntegrityLimit,
	}
	suiteAES256GCM = suite{
		id: tls.TLS_AES_256_GCM_SHA384, hash: newSHA384, keyLen: 32, newAEAD: newAESGCM,
		confidentialityLimit: AESGCMConfidentialityLimit, integrityLimit: AESGCMIntegrityLimit,
	}
	suiteChaCha20 = suite{
		id: tls.TLS_CHACHA20_POLY1305_SHA256, hash: newSHA256, sha256: true, keyLen: 32, newAEAD: newChaCha20Poly1305,
		chachaHP:             true,
		confidentialityLimit: ChaCha20ConfidentialityLimit, integrityLimit: ChaCha20IntegrityLimit,
	}
)

// lookupSuite maps a TLS cipher suite ID (tls.TLS_AES_128_GCM_SHA256...) to
// its parameters.
func lookupSuite(id uint16) (*suite, error) {
	switch id {
	case tls.TLS_AES_128_GCM_SHA256:
		return &suiteAES128GCM, nil
	case tls.TLS_AES_256_GCM_SHA384:
		return &suiteAES256GCM, nil
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return &suiteChaCha20, nil
	}
	return nil, fmt.Errorf("%w: %#04x", ErrUnknownSuite, id)
}

// Limits returns the confidentiality and integrity limits (RFC 9001 section
// 6.6) of a TLS cipher suite, in packets.
func Limits(suiteID uint16) (confidentiality, integrity uint64, err error) {
	s, err := lookupSuite(suiteID)
	if err != nil {
		return 0, 0, err
	}
	return s.confidentialityLimit, s.integrityLimit, nil
}
