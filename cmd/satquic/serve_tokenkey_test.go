package main

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/quic"
)

// retryCounter is a client socket that counts the Retry packets it
// receives: in QUIC version 1 a long header of type 3 (RFC 9000 section
// 17.2.5), whose first byte is 0xf0 with its four unused bits.
type retryCounter struct {
	net.PacketConn
	retries atomic.Int32
}

func (c *retryCounter) ReadFrom(p []byte) (int, net.Addr, error) {
	n, addr, err := c.PacketConn.ReadFrom(p)
	if isRetryV1(p[:n]) {
		c.retries.Add(1)
	}
	return n, addr, err
}

func isRetryV1(p []byte) bool {
	return len(p) >= 5 && p[0]&0xf0 == 0xf0 && binary.BigEndian.Uint32(p[1:5]) == uint32(quic.Version1)
}

// watchedTokenStore is a client's token store that tells when a server
// gave a token (NEW_TOKEN) and counts the tokens the client presented.
type watchedTokenStore struct {
	quic.TokenStore
	given     chan struct{}
	presented atomic.Int32
}

func newWatchedTokenStore() *watchedTokenStore {
	return &watchedTokenStore{TokenStore: quic.NewTokenCache(4), given: make(chan struct{}, 1)}
}

func (s *watchedTokenStore) Put(key string, token []byte) {
	s.TokenStore.Put(key, token)
	select {
	case s.given <- struct{}{}:
	default:
	}
}

func (s *watchedTokenStore) Take(key string) ([]byte, bool) {
	tok, ok := s.TokenStore.Take(key)
	if ok {
		s.presented.Add(1)
	}
	return tok, ok
}

// dialForToken connects to the server at addr with the client's token
// store, waits for the server's NEW_TOKEN and returns how many Retry
// packets the connection met.
func dialForToken(t *testing.T, addr string, store *watchedTokenStore) int {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	serveMust(t, err)
	defer pc.Close()
	sock := &retryCounter{PacketConn: pc}
	tr := &quic.Transport{Conn: sock}
	defer tr.Close()
	raddr, err := net.ResolveUDPAddr("udp", addr)
	serveMust(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	tlsConf := &tls.Config{InsecureSkipVerify: true, ServerName: "localhost", NextProtos: []string{"h3"}}
	c, err := tr.Dial(ctx, raddr, tlsConf, &quic.Config{Version: quic.Version1, TokenStore: store})
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.CloseWithError(0, "")
	// The token comes once the handshake is confirmed (RFC 9000 section
	// 8.1.3).
	select {
	case <-store.given:
	case <-time.After(10 * time.Second):
		t.Fatalf("no NEW_TOKEN from %s", addr)
	}
	return int(sock.retries.Load())
}

// TestServeTokenKeyAcrossRestart: a server run with --retry and
// --token-key gives its client a NEW_TOKEN token; restarted with the same
// key file, it takes the token as proof of the client's address and skips
// the Retry round trip (RFC 9000 section 8.1.3). Restarted with another
// key, or with none, it cannot open the token, acts as if there were none
// and sends a Retry, after which the connection goes on.
func TestServeTokenKeyAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	key := writeKeyFile(t, strings.Repeat("3c", 32))
	other := writeKeyFile(t, strings.Repeat("c3", 32))
	store := newWatchedTokenStore()

	h := startServeHandle(t, dir, "--retry", "--token-key", key)
	addr := h.addr
	// A ClientHello of two datagrams is two first Initials: each gets a
	// Retry.
	if n := dialForToken(t, addr, store); n == 0 {
		t.Fatal("the first connection met no Retry, though --retry asks every client without a token")
	}
	for _, run := range []struct {
		name      string
		keyFlags  []string
		wantRetry bool
	}{
		{"the same key", []string{"--token-key", key}, false},
		{"another key", []string{"--token-key", other}, true},
		{"no key file", nil, true},
	} {
		serveMust(t, h.stop(t))
		h = startServeHandle(t, dir, append([]string{"--retry", "--addr", addr}, run.keyFlags...)...)
		presented := store.presented.Load()
		if n := dialForToken(t, addr, store); (n > 0) != run.wantRetry {
			t.Errorf("restarted with %s: the connection met %d Retry packets, want a Retry: %v", run.name, n, run.wantRetry)
		}
		if store.presented.Load() != presented+1 {
			t.Errorf("restarted with %s: the client did not present the token of the last run", run.name)
		}
	}
}
