package capture

import (
	"crypto"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// QUIC versions whose packet formats the analysis knows.
const (
	Version1 uint32 = 0x00000001 // RFC 9000
	Version2 uint32 = 0x6b3343cf // RFC 9369
)

// Salts of the Initial secrets: RFC 9001 section 5.2 and RFC 9369
// section 3.3.1.
var (
	initialSaltV1 = []byte{0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
		0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a}
	initialSaltV2 = []byte{0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
		0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9}
)

// labels are the HKDF labels of a version's packet protection: QUIC v2
// renamed them (RFC 9369 section 3.3.2) so that its keys differ.
type labels struct{ key, iv, hp, ku string }

func versionLabels(v uint32) labels {
	if v == Version2 {
		return labels{"quicv2 key", "quicv2 iv", "quicv2 hp", "quicv2 ku"}
	}
	return labels{"quic key", "quic iv", "quic hp", "quic ku"}
}

// suite is what a TLS 1.3 cipher suite means to QUIC packet protection.
type suite struct {
	id     uint16
	hash   crypto.Hash
	keyLen int
	chacha bool
}

func suiteByID(id uint16) (suite, error) {
	switch id {
	case tls.TLS_AES_128_GCM_SHA256:
		return suite{id, crypto.SHA256, 16, false}, nil
	case tls.TLS_AES_256_GCM_SHA384:
		return suite{id, crypto.SHA384, 32, false}, nil
	case tls.TLS_CHACHA20_POLY1305_SHA256:
		return suite{id, crypto.SHA256, 32, true}, nil
	}
	return suite{}, fmt.Errorf("capture: cipher suite %#04x has no QUIC packet protection", id)
}

// expandLabel is TLS 1.3's HKDF-Expand-Label (RFC 8446 section 7.1) with
// an empty context, the only kind QUIC uses.
func expandLabel(h crypto.Hash, secret []byte, label string, length int) []byte {
	full := "tls13 " + label
	info := make([]byte, 0, 4+len(full))
	info = binary.BigEndian.AppendUint16(info, uint16(length))
	info = append(info, byte(len(full)))
	info = append(info, full...)
	info = append(info, 0)
	out, err := hkdf.Expand(h.New, secret, string(info), length)
	if err != nil {
		// Expand fails only for lengths beyond 255 hash blocks.
		panic("capture: HKDF-Expand-Label: " + err.Error())
	}
	return out
}

// protection opens the packets of one direction, space and key
// generation.
type protection struct {
	aead cipher.AEAD
	iv   []byte
	hp   headerProtection
}

// headerProtection computes the mask of RFC 9001 section 5.4 from a
// sample of the protected payload.
type headerProtection interface {
	mask(sample []byte) [5]byte
}

type aesHP struct{ block cipher.Block }

func (a aesHP) mask(sample []byte) [5]byte {
	var out [16]byte
	a.block.Encrypt(out[:], sample[:16])
	return [5]byte(out[:5])
}

type chachaHP struct{ key []byte }

func (c chachaHP) mask(sample []byte) [5]byte {
	var out [5]byte
	s, err := chacha20.NewUnauthenticatedCipher(c.key, sample[4:16])
	if err != nil {
		return out
	}
	s.SetCounter(binary.LittleEndian.Uint32(sample[:4]))
	s.XORKeyStream(out[:], out[:])
	return out
}

// newProtection derives the packet protection of a traffic secret.
func newProtection(s suite, v uint32, secret []byte) (*protection, error) {
	l := versionLabels(v)
	key := expandLabel(s.hash, secret, l.key, s.keyLen)
	iv := expandLabel(s.hash, secret, l.iv, 12)
	hpKey := expandLabel(s.hash, secret, l.hp, s.keyLen)
	p := &protection{iv: iv}
	var err error
	if s.chacha {
		p.aead, err = chacha20poly1305.New(key)
		p.hp = chachaHP{hpKey}
	} else {
		var block, hpBlock cipher.Block
		if block, err = aes.NewCipher(key); err == nil {
			p.aead, err = cipher.NewGCM(block)
		}
		if err == nil {
			hpBlock, err = aes.NewCipher(hpKey)
			p.hp = aesHP{hpBlock}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("capture: packet protection: %w", err)
	}
	return p, nil
}

// nextSecret is the secret of the next key phase (RFC 9001 section 6.1).
// Header protection keeps the first generation's key.
func nextSecret(s suite, v uint32, secret []byte) []byte {
	return expandLabel(s.hash, secret, versionLabels(v).ku, s.hash.Size())
}

// initialSecrets are the client's and the server's Initial secrets for a
// connection whose client chose dcid (RFC 9001 section 5.2).
func initialSecrets(v uint32, dcid []byte) (client, server []byte, err error) {
	salt := initialSaltV1
	if v == Version2 {
		salt = initialSaltV2
	} else if v != Version1 {
		return nil, nil, fmt.Errorf("capture: no Initial keys for version %#08x", v)
	}
	prk, err := hkdf.Extract(func() hash.Hash { return sha256.New() }, dcid, salt)
	if err != nil {
		return nil, nil, err
	}
	return expandLabel(crypto.SHA256, prk, "client in", 32), expandLabel(crypto.SHA256, prk, "server in", 32), nil
}

// initialProtection is the Initial packet protection of one direction.
func initialProtection(v uint32, dcid []byte, fromClient bool) (*protection, error) {
	c, s, err := initialSecrets(v, dcid)
	if err != nil {
		return nil, err
	}
	secret := s
	if fromClient {
		secret = c
	}
	aes128, _ := suiteByID(tls.TLS_AES_128_GCM_SHA256)
	return newProtection(aes128, v, secret)
}

var errShort = errors.New("capture: packet too short")
