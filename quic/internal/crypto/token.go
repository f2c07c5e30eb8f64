package crypto

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// TokenKind tells the two kinds of address validation token apart (RFC 9000
// section 8.1.3): they have different lifetimes and bind different things.
type TokenKind uint8

const (
	// TokenRetry is carried in a Retry packet. It is valid for a short
	// time, binds the client's address and port, and remembers the
	// client's original Destination Connection ID for the
	// original_destination_connection_id transport parameter (RFC 9000
	// section 7.3).
	TokenRetry TokenKind = 1
	// TokenNewToken is sent in a NEW_TOKEN frame for a future connection.
	// It binds only the client's IP address, since the port will change.
	TokenNewToken TokenKind = 2
)

// Token is the content of an address validation token.
type Token struct {
	Kind    TokenKind
	Version Version        // QUIC version of the connection that issued it
	Addr    netip.AddrPort // client address the token was issued to
	// IssuedAt is when the token was made; it survives sealing to the
	// millisecond.
	IssuedAt time.Time
	// OriginalDCID is the Destination Connection ID of the client's first
	// Initial (Retry tokens only).
	OriginalDCID []byte
}

// TokenConfig sets how long tokens stay valid.
type TokenConfig struct {
	// RetryLifetime bounds Retry tokens: a client uses one a round trip
	// after it is issued, so a few seconds suffice even on GEO links.
	RetryLifetime time.Duration
	// NewTokenLifetime bounds NEW_TOKEN tokens, which a client keeps for
	// its next connection.
	NewTokenLifetime time.Duration
}

// TokenKeyLen is the key length of a TokenProtector: an
// XChaCha20-Poly1305 key, whose 24-byte nonces can be drawn at random
// without fear of repeats.
const TokenKeyLen = chacha20poly1305.KeySize

// Token wire layout: a clear format byte (the associated data), the nonce,
// then the sealed fields: kind (1), version (4), issue time in Unix
// milliseconds (8), IPv6 or IPv4-mapped address (16), port (2), ODCID
// length (1) and ODCID.
const (
	tokenFormat      = 1
	tokenNonceLen    = chacha20poly1305.NonceSizeX
	tokenFixedLen    = 1 + 4 + 8 + 16 + 2 + 1
	tokenMinSealed   = 1 + tokenNonceLen + tokenFixedLen + TagLen
	tokenMaxSealed   = tokenMinSealed + MaxConnIDLen
	tokenOffsetNonce = 1
	tokenOffsetBody  = tokenOffsetNonce + tokenNonceLen
)

// TokenProtector seals and opens address validation tokens with a key only
// the server knows (RFC 9000 section 8.1.4: tokens are opaque to clients
// and must not be forgeable). It is safe for concurrent use.
type TokenProtector struct {
	aead cipher.AEAD
	cfg  TokenConfig
}

// NewTokenProtector returns a TokenProtector for a TokenKeyLen-byte secret
// key. Both lifetimes must be positive.
func NewTokenProtector(key []byte, cfg TokenConfig) (*TokenProtector, error) {
	if cfg.RetryLifetime <= 0 || cfg.NewTokenLifetime <= 0 {
		return nil, fmt.Errorf("quic crypto: token lifetimes must be positive, got retry %v, new token %v", cfg.RetryLifetime, cfg.NewTokenLifetime)
	}
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("quic crypto: token key: %w", err)
	}
	return &TokenProtector{aead: aead, cfg: cfg}, nil
}

// Seal appends the sealed form of t to dst. rand supplies the nonce
// (crypto/rand.Reader in production, a seeded source in tests).
func (p *TokenProtector) Seal(dst []byte, t Token, rand io.Reader) ([]byte, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	start := len(dst)
	dst = append(dst, tokenFormat)
	dst = append(dst, make([]byte, tokenNonceLen)...)
	nonce := dst[start+tokenOffsetNonce : start+tokenOffsetBody]
	if _, err := io.ReadFull(rand, nonce); err != nil {
		return nil, fmt.Errorf("quic crypto: token nonce: %w", err)
	}
	plain := t.appendFields(make([]byte, 0, tokenFixedLen+len(t.OriginalDCID)))
	return p.aead.Seal(dst, nonce, plain, dst[start:start+1]), nil
}

// check validates a token before sealing.
func (t *Token) check() error {
	switch t.Kind {
	case TokenRetry:
	case TokenNewToken:
		if len(t.OriginalDCID) != 0 {
			return fmt.Errorf("%w: NEW_TOKEN tokens carry no original connection ID", ErrTokenInvalid)
		}
	default:
		return fmt.Errorf("%w: kind %d", ErrTokenInvalid, t.Kind)
	}
	if _, err := t.Version.params(); err != nil {
		return err
	}
	if !t.Addr.IsValid() {
		return fmt.Errorf("%w: no client address", ErrTokenInvalid)
	}
	if len(t.OriginalDCID) > MaxConnIDLen {
		return fmt.Errorf("%w: original destination connection ID of %d bytes", ErrConnIDLen, len(t.OriginalDCID))
	}
	return nil
}

func (t *Token) appendFields(b []byte) []byte {
	b = append(b, byte(t.Kind))
	b = binary.BigEndian.AppendUint32(b, uint32(t.Version))
	b = binary.BigEndian.AppendUint64(b, uint64(t.IssuedAt.UnixMilli()))
	ip := t.Addr.Addr().Unmap().As16()
	b = append(b, ip[:]...)
	b = binary.BigEndian.AppendUint16(b, t.Addr.Port())
	b = append(b, byte(len(t.OriginalDCID)))
	return append(b, t.OriginalDCID...)
}

// Open authenticates a token a client sent and checks it against the
// datagram's source address, the connection's QUIC version and now. The
// token is not modified.
func (p *TokenProtector) Open(token []byte, addr netip.AddrPort, v Version, now time.Time) (Token, error) {
	t, err := p.decrypt(token)
	if err != nil {
		return Token{}, err
	}
	if t.Version != v {
		return Token{}, fmt.Errorf("%w: issued on %v, used on %v", ErrTokenVersion, t.Version, v)
	}
	if err := p.checkAddr(&t, addr); err != nil {
		return Token{}, err
	}
	if err := p.checkAge(&t, now); err != nil {
		return Token{}, err
	}
	return t, nil
}

// decrypt authenticates and parses a sealed token.
func (p *TokenProtector) decrypt(token []byte) (Token, error) {
	if len(token) < tokenMinSealed || len(token) > tokenMaxSealed || token[0] != tokenFormat {
		return Token{}, fmt.Errorf("%w: %d bytes", ErrTokenInvalid, len(token))
	}
	nonce := token[tokenOffsetNonce:tokenOffsetBody]
	plain, err := p.aead.Open(nil, nonce, token[tokenOffsetBody:], token[:1])
	if err != nil {
		return Token{}, fmt.Errorf("%w: not sealed with this key", ErrTokenInvalid)
	}
	return parseFields(plain)
}

func parseFields(b []byte) (Token, error) {
	if len(b) < tokenFixedLen || int(b[tokenFixedLen-1]) != len(b)-tokenFixedLen {
		return Token{}, fmt.Errorf("%w: bad layout", ErrTokenInvalid)
	}
	t := Token{
		Kind:     TokenKind(b[0]),
		Version:  Version(binary.BigEndian.Uint32(b[1:5])),
		IssuedAt: time.UnixMilli(int64(binary.BigEndian.Uint64(b[5:13]))),
	}
	ip := netip.AddrFrom16([16]byte(b[13:29])).Unmap()
	t.Addr = netip.AddrPortFrom(ip, binary.BigEndian.Uint16(b[29:31]))
	if n := len(b) - tokenFixedLen; n > 0 {
		t.OriginalDCID = append([]byte(nil), b[tokenFixedLen:]...)
	}
	if t.Kind != TokenRetry && t.Kind != TokenNewToken {
		return Token{}, fmt.Errorf("%w: kind %d", ErrTokenInvalid, t.Kind)
	}
	return t, nil
}

// checkAddr compares the token's address with the client's: address and
// port for Retry tokens, address only for NEW_TOKEN tokens.
func (p *TokenProtector) checkAddr(t *Token, addr netip.AddrPort) error {
	got := addr.Addr().Unmap().WithZone("")
	if got != t.Addr.Addr() || (t.Kind == TokenRetry && addr.Port() != t.Addr.Port()) {
		return fmt.Errorf("%w: issued to %v, presented by %v", ErrTokenAddress, t.Addr, addr)
	}
	return nil
}

// checkAge rejects tokens past their kind's lifetime, and tokens dated
// after now.
func (p *TokenProtector) checkAge(t *Token, now time.Time) error {
	lifetime := p.cfg.NewTokenLifetime
	if t.Kind == TokenRetry {
		lifetime = p.cfg.RetryLifetime
	}
	age := now.Sub(t.IssuedAt)
	if age < 0 {
		return fmt.Errorf("%w: issued %v after now", ErrTokenExpired, -age)
	}
	if age > lifetime {
		return fmt.Errorf("%w: %v old, lifetime %v", ErrTokenExpired, age, lifetime)
	}
	return nil
}
