package tunnel

import (
	"context"
	"encoding/binary"
	"hash/maphash"
	"sync"
	"testing"

	"github.com/satquic/satquic/tunnel/tunneltest"
)

// withPorts sets the first four bytes after the 20-byte IPv4 header.
func withPorts(p []byte, src, dst uint16) []byte {
	binary.BigEndian.PutUint16(p[20:], src)
	binary.BigEndian.PutUint16(p[22:], dst)
	return p
}

func TestFlowHash(t *testing.T) {
	seed := maphash.MakeSeed()
	out := withPorts(ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0), 40000, 443)
	back := withPorts(ipv4Packet("203.0.113.1", "10.8.0.2", 60, 0), 443, 40000)
	if flowHash(seed, out) != flowHash(seed, back) {
		t.Fatal("the two directions of a flow hash apart")
	}
	other := withPorts(ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0), 40001, 443)
	if flowHash(seed, out) == flowHash(seed, other) {
		t.Fatal("two flows of other ports hash alike")
	}
	// A port pair mirrored between the same addresses is another flow.
	mirrored := withPorts(ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0), 443, 40000)
	if flowHash(seed, out) == flowHash(seed, mirrored) {
		t.Fatal("mirrored ports hash alike")
	}
	for _, junk := range [][]byte{nil, {0x45}, {0x60, 0}, {0x10, 1, 2}} {
		if flowHash(seed, junk) != 0 {
			t.Fatalf("%x hashes", junk)
		}
	}
}

// TestFlowsSpreadOverSessions runs four client sessions and four proxy
// sessions, each pair on its own carrier, between two devices. 100 flows
// of 25 packets each are sent in one burst each way: every packet arrives
// and each flow's in order, which a flow split over sessions would break,
// and every session carries a share.
func TestFlowsSpreadOverSessions(t *testing.T) {
	const lanes, flows, perFlow = 4, 100, 25
	var clients, proxies []Session
	for range lanes {
		pair := newSessionPair(t)
		clients, proxies = append(clients, pair.client), append(proxies, pair.proxy)
	}
	clientDev, proxyDev := tunneltest.NewDevice(1500), tunneltest.NewDevice(1500)
	clientFwd, err := NewMulti(clientDev, clients, Config{})
	if err != nil {
		t.Fatal(err)
	}
	proxyFwd, _ := NewMulti(proxyDev, proxies, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, f := range []*Forwarder{clientFwd, proxyFwd} {
		wg.Go(func() {
			if err := f.Run(ctx); err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	burst := func(from, to *tunneltest.Device, src, dst string, up bool) {
		go func() {
			for seq := range perFlow {
				for flow := range flows {
					p := ipv4Packet(src, dst, 64, uint32(seq))
					if up {
						from.Inject <- withPorts(p, uint16(10000+flow), 443)
					} else {
						from.Inject <- withPorts(p, 443, uint16(10000+flow))
					}
				}
			}
		}()
		next := make(map[uint16]uint32)
		for range flows * perFlow {
			p := to.Expect(t)
			port, seq := binary.BigEndian.Uint16(p[20:]), binary.BigEndian.Uint32(p[60:])
			if !up {
				port = binary.BigEndian.Uint16(p[22:])
			}
			if seq != next[port] {
				t.Fatalf("flow %d: packet %d where %d was next", port, seq, next[port])
			}
			next[port]++
		}
	}
	burst(clientDev, proxyDev, "10.8.0.2", "203.0.113.1", true)
	burst(proxyDev, clientDev, "203.0.113.1", "10.8.0.2", false)
	cancel()
	wg.Wait()
	cs, ps := clientFwd.Stats(), proxyFwd.Stats()
	if cs.Tunneled.Packets != flows*perFlow || ps.Tunneled.Packets != flows*perFlow || cs.OverloadDrops+ps.OverloadDrops != 0 {
		t.Fatalf("client %+v, proxy %+v", cs, ps)
	}
	for i := range lanes {
		for _, st := range []Stats{cs, ps} {
			// The seed is random: the bounds hold but for odds below 1e-10.
			if n := st.Sessions[i].Sent.Packets; n == 0 || n > flows*perFlow*6/10 {
				t.Errorf("session %d carried %d of %d packets", i, n, flows*perFlow)
			}
		}
	}
}
