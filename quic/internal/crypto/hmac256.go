package crypto

import (
	"crypto/sha256"
	"hash"
)

// hmacSHA256 is HMAC-SHA256 (RFC 2104) with its key prepared once: the key
// xored with the inner and the outer pad. A connection derives its packet
// keys from a dozen HKDF-Expand-Label outputs of short inputs, every one
// an HMAC of a few dozen bytes; computing each with sha256.Sum256 over a
// buffer on the stack costs no allocation, where crypto/hmac allocates two
// hash states per key and saves and restores them between labels. Every
// suite but TLS_AES_256_GCM_SHA384 hashes with SHA-256, and so do the
// Initial secrets (RFC 9001 section 5.2).
type hmacSHA256 struct {
	inner, outer [sha256.BlockSize]byte
}

// hmacInputMax is the longest message a sum takes on the stack: an
// HKDF-Expand block, T(i-1) | HkdfLabel | i, with the longest HkdfLabel of
// RFC 8446 section 7.1 (a 255-byte label and no context).
const hmacInputMax = sha256.Size + 2 + 1 + 255 + 1 + 1

// init prepares key; a key longer than a block is hashed first (RFC 2104
// section 2).
func (m *hmacSHA256) init(key []byte) {
	if len(key) > sha256.BlockSize {
		k := sha256.Sum256(key)
		key = k[:]
	}
	*m = hmacSHA256{}
	copy(m.inner[:], key)
	copy(m.outer[:], key)
	for i := range m.inner {
		m.inner[i] ^= 0x36
		m.outer[i] ^= 0x5c
	}
}

// sum is HMAC(key, a | b | c).
func (m *hmacSHA256) sum(a, b, c []byte) [sha256.Size]byte {
	var buf [sha256.BlockSize + hmacInputMax]byte
	var inner [sha256.Size]byte
	if n := len(a) + len(b) + len(c); n <= hmacInputMax {
		k := copy(buf[:], m.inner[:])
		k += copy(buf[k:], a)
		k += copy(buf[k:], b)
		k += copy(buf[k:], c)
		inner = sha256.Sum256(buf[:k])
	} else {
		inner = m.streamInner(a, b, c)
	}
	k := copy(buf[:], m.outer[:])
	k += copy(buf[k:], inner[:])
	return sha256.Sum256(buf[:k])
}

// streamInner is the inner hash of a message too long for sum's buffer.
func (m *hmacSHA256) streamInner(parts ...[]byte) [sha256.Size]byte {
	var h hash.Hash = sha256.New()
	h.Write(m.inner[:])
	for _, p := range parts {
		h.Write(p)
	}
	var out [sha256.Size]byte
	h.Sum(out[:0])
	return out
}

// extractSHA256 is HKDF-Extract(salt, ikm) with SHA-256 (RFC 5869 section
// 2.2): HMAC(salt, ikm).
func extractSHA256(salt, ikm []byte) []byte {
	var m hmacSHA256
	m.init(salt)
	prk := m.sum(ikm, nil, nil)
	return prk[:]
}
