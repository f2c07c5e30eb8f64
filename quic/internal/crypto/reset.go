package crypto

import (
	"crypto/subtle"
	"fmt"
)

const (
	// ResetTokenLen is the length of a stateless reset token (RFC 9000
	// section 10.3).
	ResetTokenLen = 16
	// MinStatelessResetLen is the shortest datagram that can be a
	// Stateless Reset: 5 bytes that look like a short header, then the
	// token (RFC 9000 section 10.3).
	MinStatelessResetLen = 5 + ResetTokenLen
	// MinResetKeyLen is the shortest static key accepted for reset tokens.
	MinResetKeyLen = 16
)

// ResetKey computes stateless reset tokens from one static key, so that an
// endpoint that lost a connection's state can still produce its token from
// the connection ID of a packet (RFC 9000 section 10.3.2).
//
// The key's HMAC pads are prepared once: a connection issues a token with
// each of its connection IDs (four at each end of a short connection), and
// crypto/hmac would allocate and key two hash states for every one.
type ResetKey struct {
	mac hmacSHA256
}

// NewResetKey returns a ResetKey for a secret static key of at least
// MinResetKeyLen bytes (32 random bytes are the natural choice). Endpoints
// that share the key can reset each other's connections: give each
// deployment its own.
func NewResetKey(key []byte) (*ResetKey, error) {
	if len(key) < MinResetKeyLen {
		return nil, fmt.Errorf("quic crypto: stateless reset key of %d bytes, need at least %d", len(key), MinResetKeyLen)
	}
	r := new(ResetKey)
	r.mac.init(key)
	return r, nil
}

// Token returns the stateless reset token of a connection ID the endpoint
// issued: HMAC-SHA256(static key, connection ID) truncated to 16 bytes
// (RFC 9000 section 10.3.2). Zero-length connection IDs cannot carry a
// reset and are rejected.
func (r *ResetKey) Token(connID []byte) ([ResetTokenLen]byte, error) {
	var tok [ResetTokenLen]byte
	if len(connID) == 0 || len(connID) > MaxConnIDLen {
		return tok, fmt.Errorf("%w: %d bytes for a reset token", ErrConnIDLen, len(connID))
	}
	sum := r.mac.sum(connID, nil, nil)
	copy(tok[:], sum[:])
	return tok, nil
}

// MatchesResetToken reports whether datagram ends with token, comparing in
// constant time so that the token does not leak through timing (RFC 9000
// section 10.3.1). Datagrams shorter than MinStatelessResetLen never match.
func MatchesResetToken(datagram []byte, token [ResetTokenLen]byte) bool {
	if len(datagram) < MinStatelessResetLen {
		return false
	}
	return subtle.ConstantTimeCompare(datagram[len(datagram)-ResetTokenLen:], token[:]) == 1
}
