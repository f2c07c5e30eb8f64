package quic

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/crypto"
)

// TokenStore keeps the address validation tokens servers give clients in
// NEW_TOKEN frames (RFC 9000 section 8.1.3), so that a client's next
// connection to the same server skips Retry and the server's amplification
// limit. Keys name servers (their TLS server name, or their address). An
// implementation may persist tokens across runs; connections sharing a
// store call it from several goroutines, so it must be safe for that.
type TokenStore interface {
	// Put stores the latest token the server named key gave.
	Put(key string, token []byte)
	// Take returns the token for key and forgets it: a token is used
	// once, so that a client's connections cannot be linked through it.
	Take(key string) ([]byte, bool)
}

// NewTokenCache returns an in-memory TokenStore that keeps the latest token
// of up to capacity servers, forgetting the least recently stored.
func NewTokenCache(capacity int) TokenStore { return core.NewTokenCache(capacity) }

// TokenKey seals the address validation tokens a Transport's Listener
// gives clients (Retry and NEW_TOKEN tokens, RFC 9000 section 8.1.4).
// Keep it across restarts, and share it among the servers behind one
// address, so that the tokens they gave stay valid.
type TokenKey [crypto.TokenKeyLen]byte

// Token lifetimes. A Retry token is used one round trip after it is
// given, so a few seconds cover a GEO path and the retransmissions of a
// lossy one; a NEW_TOKEN token serves the client's next connection.
const (
	retryTokenLifetime    = 10 * time.Second
	newTokenTokenLifetime = 24 * time.Hour
)

// newTokenProtector makes the Transport's token sealer from its TokenKey,
// or from a random key.
func newTokenProtector(key *TokenKey) (*crypto.TokenProtector, error) {
	if key == nil {
		key = new(TokenKey)
		if _, err := rand.Read(key[:]); err != nil {
			return nil, fmt.Errorf("quic: drawing a token key: %w", err)
		}
	}
	tp, err := crypto.NewTokenProtector(key[:], crypto.TokenConfig{
		RetryLifetime:    retryTokenLifetime,
		NewTokenLifetime: newTokenTokenLifetime,
	})
	if err != nil {
		return nil, fmt.Errorf("quic: %w", err)
	}
	return tp, nil
}
