package core

import (
	"testing"
	"time"
)

func TestHandshake(t *testing.T) {
	ccfg, scfg := testConfigs(t, 1)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	p.collectEvents()
	if !hasEvent(p.clientEvents, EventHandshakeComplete) || !hasEvent(p.serverEvents, EventHandshakeComplete) {
		t.Errorf("handshake complete events missing: client %v server %v", p.clientEvents, p.serverEvents)
	}
	if got := p.client.ConnectionState().NegotiatedProtocol; got != testALPN {
		t.Errorf("ALPN %q, want %q", got, testALPN)
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
