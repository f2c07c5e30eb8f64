package core

import (
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

func TestHandshake(t *testing.T) {
	ccfg, scfg := testConfigs(t, 1)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	p.collectEvents()
	if !hasEvent(p.clientEvents, EventHandshakeComplete) || !hasEvent(p.serverEvents, EventHandshakeComplete) {
		t.Errorf("handshake complete events missing: client %v server %v", p.clientEvents, p.serverEvents)
	}
	for _, c := range []*Conn{p.client, p.server} {
		if got := c.ConnectionState().NegotiatedProtocol; got != testALPN || !c.ConnectionState().HandshakeComplete {
			t.Errorf("client=%v: ALPN %q, want %q", c.isClient, got, testALPN)
		}
	}
	// The server let its TLS state go with the handshake; the client
	// keeps it for the session tickets to come.
	if p.server.tls.conn != nil || p.client.tls.conn == nil {
		t.Errorf("TLS connections held: server %v, client %v", p.server.tls.conn != nil, p.client.tls.conn != nil)
	}
	// Two round trips: the client's Finished arrives at 1 RTT plus the
	// server's flight, HANDSHAKE_DONE half a round trip later.
	if p.now > 60*time.Millisecond {
		t.Errorf("handshake confirmed at %v, want within 3 one-way delays of 10 ms", p.now)
	}
	for _, c := range []*Conn{p.client, p.server} {
		if !c.spaces[spaceInitial].discarded || !c.spaces[spaceHandshake].discarded {
			t.Errorf("client=%v: Initial or Handshake keys kept after confirmation", c.isClient)
		}
		if st := c.Stats(); st.PacketsDropped != 0 {
			t.Errorf("client=%v dropped %d packets", c.isClient, st.PacketsDropped)
		}
	}
	if p.sizes[0][0] < 1200 {
		t.Errorf("client's first datagram is %d bytes, want at least 1200", p.sizes[0][0])
	}
	pp, ok := p.client.PeerParams()
	if !ok || pp.InitialMaxStreamsBidi != DefaultMaxIncomingStreams {
		t.Errorf("client's view of server params: %+v %v", pp, ok)
	}
}

func TestHandshakeVersion2(t *testing.T) {
	ccfg, scfg := testConfigs(t, 4)
	ccfg.Version, scfg.Version = wire.Version2, wire.Version2
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	if p.server.version != wire.Version2 {
		t.Fatalf("server runs %v", p.server.version)
	}
}

// TestAmplificationLimit: a server whose client never proves its address
// sends at most three times what it received (RFC 9000 section 8.1), and
// resumes when more arrives.
func TestAmplificationLimit(t *testing.T) {
	ccfg, scfg := testConfigs(t, 5)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	// Only the client's first flight (two datagrams) reaches the server.
	p.drop = func(toServer bool, n int, _ []byte) bool { return toServer && n >= 2 }
	p.run(func() bool { return false }, 15*time.Second)
	if p.serverRecv != 2400 || p.serverSent > 3*p.serverRecv || p.serverSent < 2400 {
		t.Fatalf("server received %d and sent %d bytes", p.serverRecv, p.serverSent)
	}
	if p.server.Err() != nil {
		t.Fatal(p.server.Err())
	}
	if !p.server.amp.limited {
		t.Errorf("server not marked amplification limited after sending %v", p.sizes[1])
	}
	// Once the client's datagrams get through, the handshake completes.
	p.drop = nil
	p.mustRun(p.confirmed, p.now+10*time.Second)
}

func TestConfigValidation(t *testing.T) {
	ccfg, _ := testConfigs(t, 6)
	bad := []func(c *Config){
		func(c *Config) { c.TLS = nil },
		func(c *Config) { c.ConnIDLen = 21 },
		func(c *Config) { c.MaxDatagramSize = 1000 },
		func(c *Config) { c.IdleTimeout = -1 },
		func(c *Config) { c.AckDelayExponent = 21 },
		func(c *Config) { c.InitialStreamReceiveWindow = 1 << 30 },
		func(c *Config) { c.ActiveConnIDLimit = 1 },
		func(c *Config) { c.Version = 0x12345678 },
	}
	for i, mod := range bad {
		c := *ccfg
		mod(&c)
		if _, err := NewClientConn(&c, 0, serverAddr); !errors.Is(err, ErrConfig) {
			t.Errorf("case %d: %v, want ErrConfig", i, err)
		}
	}
	if _, err := NewClientConn(nil, 0, serverAddr); !errors.Is(err, ErrConfig) {
		t.Errorf("nil config: %v", err)
	}
}
