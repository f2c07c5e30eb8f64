package crypto

import "errors"

var (
	// ErrUnknownVersion reports a QUIC version this package has no keys for.
	ErrUnknownVersion = errors.New("quic crypto: unsupported QUIC version")
	// ErrUnknownSuite reports a TLS cipher suite QUIC cannot use here.
	ErrUnknownSuite = errors.New("quic crypto: unsupported cipher suite")
	// ErrSecretLength reports a traffic secret whose length does not match
	// the suite's hash.
	ErrSecretLength = errors.New("quic crypto: bad secret length")
	// ErrPacketTooShort reports a packet too short for the operation: no
	// room for the header protection sample, the packet number or the tag.
	ErrPacketTooShort = errors.New("quic crypto: packet too short")
	// ErrBadOffset reports a header length or packet number offset outside
	// the packet.
	ErrBadOffset = errors.New("quic crypto: offset out of range")
	// ErrAuthentication reports a packet (or Retry tag) that failed AEAD
	// authentication. The core counts these against the integrity limit
	// (RFC 9001 section 6.6).
	ErrAuthentication = errors.New("quic crypto: authentication failed")
	// ErrNoKeys reports a key generation that has been discarded.
	ErrNoKeys = errors.New("quic crypto: keys not available")
)

var (
	// ErrPacketNumber reports a packet number above 2^62-1 (RFC 9000
	// section 12.3).
	ErrPacketNumber = errors.New("quic crypto: packet number out of range")
	// ErrKeyExhausted reports a key that has sealed as many packets as its
	// confidentiality limit allows (RFC 9001 section 6.6): update keys.
	ErrKeyExhausted = errors.New("quic crypto: key reached its confidentiality limit")
	// ErrHeaderForm reports a long header where a short header is needed.
	ErrHeaderForm = errors.New("quic crypto: wrong header form")
	// ErrKeyUpdate reports a key phase ordering that RFC 9001 section 6.4
	// makes a connection error of type KEY_UPDATE_ERROR.
	ErrKeyUpdate = errors.New("quic crypto: key update error")
)

// ErrConnIDLen reports a connection ID longer than MaxConnIDLen, or empty
// where one is needed.
var ErrConnIDLen = errors.New("quic crypto: bad connection ID length")

// Address validation token errors (RFC 9000 section 8.1). A server that
// gets one treats the client address as not validated.
var (
	// ErrTokenInvalid reports a token that is malformed or was not sealed
	// with this key.
	ErrTokenInvalid = errors.New("quic crypto: invalid address validation token")
	// ErrTokenExpired reports a token older than its lifetime, or issued
	// after now.
	ErrTokenExpired = errors.New("quic crypto: address validation token expired")
	// ErrTokenAddress reports a token issued to another client address.
	ErrTokenAddress = errors.New("quic crypto: address validation token for another address")
	// ErrTokenVersion reports a token issued on another QUIC version (RFC
	// 9369 section 5).
	ErrTokenVersion = errors.New("quic crypto: address validation token from another QUIC version")
)

// Saved path state errors (pathstate.go). A server that gets one ignores
// the state and starts the connection's congestion control as usual.
var (
	// ErrPathStateInvalid reports a state that is malformed, forged,
	// altered or sealed with another key.
	ErrPathStateInvalid = errors.New("quic crypto: invalid saved path state")
	// ErrPathStateVersion reports a state of a format this package does
	// not read.
	ErrPathStateVersion = errors.New("quic crypto: saved path state of another format")
	// ErrPathStateExpired reports a state past its lifetime, or issued
	// too far after now.
	ErrPathStateExpired = errors.New("quic crypto: saved path state expired")
	// ErrPathStateAddress reports a state issued to another client.
	ErrPathStateAddress = errors.New("quic crypto: saved path state for another address")
)
