package connectip_test

import (
	"bytes"
	"net/netip"
	"sync"
	"testing"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/connectip/connectiptest"
)

// lentProxy is rawProxy over a connectiptest.LendingEnd.
func lentProxy(t *testing.T) (*connectiptest.End, *connectiptest.LendingEnd, *connectip.Session) {
	t.Helper()
	a, b := connectiptest.Pipe(connectiptest.Config{})
	le := connectiptest.Lending(t, b)
	routes := []connectip.IPRoute{connectip.RouteFromPrefix(netip.MustParsePrefix("198.51.100.0/24"), 17)}
	proxy, err := connectip.NewProxy(le, []netip.Prefix{netip.MustParsePrefix("10.7.0.7/32")}, routes, connectip.ProxyConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	return a, le, proxy
}

// checkLent lends all the proxy's packets, batch after batch, and checks
// that they are want, each once and in order, and that every packet of a
// batch is intact until its release.
func checkLent(t *testing.T, proxy *connectip.Session, want [][]byte) {
	t.Helper()
	var got [][]byte
	b, err := proxy.LendPackets()
	for err == nil && b != nil {
		if len(b.Packets) == 0 {
			t.Fatal("a batch without packets")
		}
		for _, p := range b.Packets {
			got = append(got, bytes.Clone(p))
		}
		b.Release()
		b.Release() // a second release does nothing
		if len(got) < len(want) {
			b = proxy.TryLendPackets()
		} else {
			b = nil
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("lent %d packets, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("packet %d differs from the one sent", i)
		}
	}
}

// TestLendPackets: over a carrier that lends its buffers, a session lends
// its packets in them, in batches of at most 64, in order, checked and
// counted as ReadPacket does (the packets it must not forward are
// dropped), and gives every buffer back once, dropped ones too.
func TestLendPackets(t *testing.T) {
	raw, le, proxy := lentProxy(t)
	var want [][]byte
	for i := range 150 {
		p := connectip.TestPacket(t, "10.7.0.7", "198.51.100.1", 17, 60+i, 64)
		if i%7 == 3 {
			p = connectip.TestPacket(t, "10.7.0.8", "198.51.100.1", 17, 60+i, 64) // spoofed
		} else {
			want = append(want, p)
		}
		if err := raw.SendDatagram(connectip.AppendDatagram(nil, 0, p)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := proxy.LendPackets()
	if err != nil || len(b.Packets) != 64 {
		t.Fatalf("first batch: %v packets, %v; want 64", b, err)
	}
	b.Release()
	checkLent(t, proxy, want[64:])
	if n := le.Outstanding(); n != 0 {
		t.Errorf("%d buffers never given back", n)
	}
	st := proxy.Stats().Received
	if st.Packets != uint64(len(want)) || st.Dropped.SourceNotAllowed != 150-uint64(len(want)) {
		t.Errorf("received %d, %d spoofed dropped; want %d and %d", st.Packets, st.Dropped.SourceNotAllowed, len(want), 150-len(want))
	}
	if b := proxy.TryLendPackets(); b != nil {
		t.Errorf("TryLendPackets with nothing waiting lent %d packets", len(b.Packets))
	}
}

// TestLendPacketsCopied: over a carrier that does not lend, the packets
// are copied into buffers of the batch, with the same result.
func TestLendPacketsCopied(t *testing.T) {
	raw, proxy := rawProxy(t)
	var want [][]byte
	for i := range 100 {
		p := connectip.TestPacket(t, "10.7.0.7", "198.51.100.1", 17, 100+i, 64)
		want = append(want, p)
		if err := raw.SendDatagram(connectip.AppendDatagram(nil, 0, p)); err != nil {
			t.Fatal(err)
		}
	}
	checkLent(t, proxy, want)
}

// TestLendPacketsConcurrentRelease: batches released on other goroutines
// while the session lends the next ones, under the race detector, lose
// and duplicate nothing and give every buffer back.
func TestLendPacketsConcurrentRelease(t *testing.T) {
	raw, le, proxy := lentProxy(t)
	const n = 2000
	go func() {
		for i := range n {
			p := connectip.TestPacket(t, "10.7.0.7", "198.51.100.1", 17, 60+i%1000, 64)
			p[len(p)-1], p[len(p)-2] = byte(i), byte(i>>8)
			for raw.SendDatagram(connectip.AppendDatagram(nil, 0, p)) != nil {
			}
		}
	}()
	release := make(chan *connectip.PacketBatch, 16)
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range release {
			b.Release()
		}
	})
	seen := 0
	for seen < n {
		b, err := proxy.LendPackets()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range b.Packets {
			if got := int(p[len(p)-1]) | int(p[len(p)-2])<<8; got != seen {
				t.Fatalf("packet %d where %d was due", got, seen)
			}
			seen++
		}
		release <- b
	}
	close(release)
	wg.Wait()
	if k := le.Outstanding(); k != 0 {
		t.Errorf("%d buffers never given back", k)
	}
}
