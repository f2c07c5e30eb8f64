package core

import (
	"crypto/tls"
	"testing"
	"time"
)

// bigChainConfig gives the server a certificate chain of about 10 kB, so
// that its first flight exceeds three times the client's Initial bytes.
func bigChainConfig(scfg *Config) {
	cert := testCert
	for range 30 {
		cert.Certificate = append(cert.Certificate, testCert.Certificate[0])
	}
	scfg.TLS = scfg.TLS.Clone()
	scfg.TLS.Certificates = []tls.Certificate{cert}
}

// completion runs a pair to confirmation and returns when the client
// completed its handshake.
func completion(t *testing.T, p *pair) time.Duration {
	t.Helper()
	var at time.Duration
	p.clientApp = func(now time.Duration, c *Conn) {
		if c.HandshakeComplete() && at == 0 {
			at = p.now
		}
	}
	p.mustRun(p.confirmed, 10*time.Second)
	return at
}

// TestNewTokenSkipsRetry: the server sends a NEW_TOKEN frame once the
// handshake is confirmed; the client stores it, and its next connection
// presents it (RFC 9000 section 8.1.3), so a server that sends Retry to
// unknown addresses accepts it at once and is not held by the
// amplification limit: the handshake takes one round trip, where the first
// connection, amplification-limited, took more.
func TestNewTokenSkipsRetry(t *testing.T) {
	ccfg, scfg := testConfigs(t, 100)
	bigChainConfig(scfg)
	v := newValidator(t, 100, 10*time.Second)
	scfg.AddressValidator = v
	store := NewTokenCache(4)
	ccfg.TokenStore = store
	const delay = 25 * time.Millisecond

	p1 := newPair(t, ccfg, scfg, delay)
	first := completion(t, p1)
	if first <= 2*delay {
		t.Fatalf("first connection completed at %v: the amplification limit did not hold the server", first)
	}
	p1.mustRun(func() bool { _, ok := store.(*tokenCache).m["satquic.test"]; return ok }, p1.now+time.Second)

	p2 := newPair(t, ccfg, scfg, delay)
	if len(p2.client.retry.token) == 0 {
		t.Fatal("second connection has no token")
	}
	// The second connection's timeline starts at 0 a second after the
	// first ended: the wall clock goes on.
	v2 := *v
	v2.Epoch = v.Epoch.Add(p1.now + time.Second)
	listen := retryListener(t, p2, &v2)
	retries := 0
	p2.listen = func(d []byte) ([]byte, *ServerParams) {
		reply, params := listen(d)
		if reply != nil {
			retries++
		}
		return reply, params
	}
	validated := false
	p2.onServer = func(c *Conn) { validated = c.amp.validated }
	second := completion(t, p2)
	if retries != 0 || !validated {
		t.Errorf("second connection: %d Retry packets, address validated %v", retries, validated)
	}
	if second != 2*delay {
		t.Errorf("second connection completed at %v, want %v (first %v)", second, 2*delay, first)
	}
	// The token was used once; the second connection brought a new one.
	if _, ok := store.Take("satquic.test"); !ok {
		t.Error("no token from the second connection")
	}
}

// TestTokenCache: the latest token per server, used once, the least
// recently stored forgotten beyond the capacity.
func TestTokenCache(t *testing.T) {
	tc := NewTokenCache(2)
	tc.Put("a", []byte("a1"))
	tc.Put("a", []byte("a2"))
	tc.Put("b", []byte("b1"))
	tc.Put("c", []byte("c1"))
	if _, ok := tc.Take("a"); ok {
		t.Error("a survived beyond the capacity")
	}
	if tok, ok := tc.Take("b"); !ok || string(tok) != "b1" {
		t.Errorf("b: %q %v", tok, ok)
	}
	if _, ok := tc.Take("b"); ok {
		t.Error("b taken twice")
	}
	tc.Put("c", []byte("c2"))
	if tok, _ := tc.Take("c"); string(tok) != "c2" {
		t.Errorf("c: %q, want the latest", tok)
	}
}

// TestNewTokenLostThenAcked: a NEW_TOKEN frame declared lost and then
// acknowledged (a spurious loss, as after a path change) is complete: no
// empty NEW_TOKEN frame is queued, which would be a FRAME_ENCODING_ERROR
// (RFC 9000 section 19.7).
func TestNewTokenLostThenAcked(t *testing.T) {
	s := newTokenState{token: []byte("tok"), pending: true}
	s.pending = false // sent
	s.onLost()
	if !s.pending {
		t.Fatal("a lost NEW_TOKEN is not queued again")
	}
	s.onAcked()
	if s.pending || s.token != nil {
		t.Fatalf("after the late ACK: pending %v, token %q", s.pending, s.token)
	}
	s.onLost()
	if s.pending {
		t.Fatal("a completed NEW_TOKEN is queued again")
	}
}
