package core

import (
	"container/list"
	"net/netip"
	"sync"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// TokenStore keeps the address validation tokens servers give in NEW_TOKEN
// frames (RFC 9000 section 8.1.3), so that a client's next connection to
// the same server skips Retry and the amplification limit. A driver may
// persist the tokens across runs. Connections sharing a store may call it
// from several goroutines: implementations must be safe for that.
type TokenStore interface {
	// Put stores the latest token the server named key gave.
	Put(key string, token []byte)
	// Take returns the token for key and forgets it: a token is used
	// once, so that connections cannot be linked through it (section
	// 8.1.3).
	Take(key string) ([]byte, bool)
}

// NewTokenCache returns an in-memory TokenStore that keeps the latest
// token of up to capacity servers, forgetting the least recently stored.
func NewTokenCache(capacity int) TokenStore {
	return &tokenCache{capacity: max(capacity, 1), m: map[string]*list.Element{}}
}

type tokenCache struct {
	mu       sync.Mutex
	capacity int
	order    list.List // front: most recent
	m        map[string]*list.Element
}

type tokenEntry struct {
	key   string
	token []byte
}

func (tc *tokenCache) Put(key string, token []byte) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if e, ok := tc.m[key]; ok {
		e.Value.(*tokenEntry).token = token
		tc.order.MoveToFront(e)
		return
	}
	tc.m[key] = tc.order.PushFront(&tokenEntry{key: key, token: token})
	for tc.order.Len() > tc.capacity {
		old := tc.order.Back()
		tc.order.Remove(old)
		delete(tc.m, old.Value.(*tokenEntry).key)
	}
}

func (tc *tokenCache) Take(key string) ([]byte, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e, ok := tc.m[key]
	if !ok {
		return nil, false
	}
	tc.order.Remove(e)
	delete(tc.m, key)
	return e.Value.(*tokenEntry).token, true
}

// tokenKey names the server a client's tokens belong to: its TLS server
// name, or its address remote without one.
func tokenKey(cfg *Config, remote netip.AddrPort) string {
	if cfg.TLS.ServerName != "" {
		return cfg.TLS.ServerName
	}
	return remote.String()
}

// takeStoredToken puts the token of an earlier connection to remote, if
// Config.TokenStore holds one, in a client's Initial packets.
func (r *retryState) takeStoredToken(cfg *Config, remote netip.AddrPort) {
	if cfg.TokenStore == nil {
		return
	}
	if tok, ok := cfg.TokenStore.Take(tokenKey(cfg, remote)); ok && len(tok) > 0 {
		r.token = tok
	}
}

// onNewToken handles a NEW_TOKEN frame (RFC 9000 section 19.7), which only
// a server sends: the client stores the token for its next connection.
func (c *Conn) onNewToken(f *wire.NewTokenFrame) error {
	if !c.isClient {
		return transportError(wire.CodeProtocolViolation, f.Type(), "NEW_TOKEN from a client")
	}
	if c.cfg.TokenStore != nil {
		c.cfg.TokenStore.Put(tokenKey(&c.cfg, c.remote), append([]byte(nil), f.Token...))
	}
	return nil
}

// newTokenState is a server's NEW_TOKEN frame until it is acknowledged.
type newTokenState struct {
	token   []byte
	pending bool // to be sent (again)
}

// issue makes the token a server sends to the client at remote once its
// handshake is confirmed at now, when it has an AddressValidator v
// (Config.AddressValidator).
func (t *newTokenState) issue(v *AddressValidator, remote netip.AddrPort, version wire.Version, now time.Duration) {
	if v == nil || v.Tokens == nil {
		return
	}
	tok, err := v.NewToken(remote, version, now)
	if err != nil {
		return // no token this time: the next connection may see a Retry
	}
	*t = newTokenState{token: tok, pending: true}
}

// appendFrame appends the NEW_TOKEN frame when it is to be sent.
func (t *newTokenState) appendFrame(w *packetWriter) {
	if !t.pending {
		return
	}
	f := wire.NewTokenFrame{Token: t.token}
	if w.appendFrame(f.Len(), f.Append) {
		t.pending = false
		w.record(sentFrame{kind: fkNewToken})
	}
}

// onAcked and onLost complete or queue again the NEW_TOKEN frame (RFC
// 9000 section 13.3). A copy declared lost and acknowledged later (a
// spurious loss) completes it too: nothing is left to send.
func (t *newTokenState) onAcked() { *t = newTokenState{} }

func (t *newTokenState) onLost() {
	if t.token != nil {
		t.pending = true
	}
}
