package quic

import (
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/netsim/memnet"
)

// resumeFarm is a client and servers at several addresses over memnet
// paths of link10ms, each server with its own Listener and Config.
type resumeFarm struct {
	t       *testing.T
	client  *Transport
	servers []*Listener
	addrs   []netip.AddrPort
}

func newResumeFarm(t *testing.T, confs ...*Config) *resumeFarm {
	t.Helper()
	n := memnet.New(memnet.Config{Seed: 3})
	cpc, err := n.Listen(memClientAddr)
	if err != nil {
		t.Fatal(err)
	}
	f := &resumeFarm{t: t, client: &Transport{Conn: cpc}}
	var transports []*Transport
	for i, conf := range confs {
		addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(i + 1)}), 443)
		if _, err := n.AddPath(memClientAddr.Addr(), addr.Addr(), link10ms, link10ms); err != nil {
			t.Fatal(err)
		}
		spc, err := n.Listen(addr)
		if err != nil {
			t.Fatal(err)
		}
		tr := &Transport{Conn: spc}
		l, err := tr.Listen(serverTLS(), conf)
		if err != nil {
			t.Fatal(err)
		}
		transports = append(transports, tr)
		f.servers, f.addrs = append(f.servers, l), append(f.addrs, addr)
	}
	t.Cleanup(func() {
		_ = f.client.Close()
		for _, tr := range transports {
			_ = tr.Close()
		}
		_ = n.Close()
	})
	return f
}

// download has server i send size bytes to the client on a unidirectional
// stream, then lets both run a few round trips (the server's last path
// state reaches the client) and closes; it returns both ends' stats.
func (f *resumeFarm) download(i int, tc *tls.Config, size int) (client, server ConnectionStats) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	data := testkit.Payload(size, uint64(i))
	accepted := make(chan *Conn, 1)
	go func() {
		s, err := f.servers[i].Accept(ctx)
		if err != nil {
			close(accepted)
			return
		}
		accepted <- s
		if st, err := s.OpenUniStream(); err == nil {
			_, _ = st.Write(data)
			_ = st.Close()
		}
	}()
	c, err := f.client.Dial(ctx, net.UDPAddrFromAddrPort(f.addrs[i]), tc, nil)
	if err != nil {
		f.t.Fatalf("Dial: %v", err)
	}
	st, err := c.AcceptUniStream(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if n, got, err := testkit.ReadAllSum(st); err != nil || n != int64(size) || got != sum(data) {
		f.t.Fatalf("%d of %d bytes, err %v", n, size, err)
	}
	s, ok := <-accepted
	if !ok {
		f.t.Fatal("no server connection")
	}
	time.Sleep(200 * time.Millisecond)
	client, server = c.Stats(), s.Stats()
	_ = c.CloseWithError(0, "")
	return client, server
}

// TestCarefulResumeFarm: with the default Config, a server hands its path
// state to the client, which keeps it with its session ticket and returns
// it on its next connection: a server of the same farm (the same
// ResumeKey, another address, its own session ticket keys) resumes from
// it, one with another key ignores it as invalid and counts it.
func TestCarefulResumeFarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		farmKey, otherKey := &ResumeKey{1}, &ResumeKey{2}
		f := newResumeFarm(t, &Config{ResumeKey: farmKey}, &Config{ResumeKey: farmKey}, &Config{ResumeKey: otherKey})
		tc := resumingTLS()

		cs, ss := f.download(0, tc, 2<<20)
		if !ss.CarefulResume.Negotiated || ss.CarefulResume.BDPFramesSent == 0 || cs.CarefulResume.BDPFramesReceived != ss.CarefulResume.BDPFramesSent {
			t.Fatalf("first connection: client %+v, server %+v", cs.CarefulResume, ss.CarefulResume)
		}

		cs, ss = f.download(1, tc, 100_000)
		r := ss.CarefulResume
		if cs.CarefulResume.BDPFramesSent != 1 || r.BDPFramesAccepted != 1 || r.SavedCongestionWindow <= 0 || r.SavedRTT < 20*time.Millisecond {
			t.Fatalf("same farm: client %+v, server %+v", cs.CarefulResume, r)
		}
		if r.Phase == "off" || r.PhaseChanges == 0 {
			t.Errorf("same farm: phase %q after %d changes", r.Phase, r.PhaseChanges)
		}

		cs, ss = f.download(2, tc, 100_000)
		r = ss.CarefulResume
		if cs.CarefulResume.BDPFramesSent != 1 || r.BDPFramesAccepted != 0 || r.Rejected.Invalid != 1 || r.Phase != "off" {
			t.Fatalf("other key: client %+v, server %+v", cs.CarefulResume, r)
		}
	})
}

// TestCarefulResumeDisabled: a client with Careful Resume off neither
// offers nor keeps a state; the server sends none.
func TestCarefulResumeDisabled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, link10ms, nil)
		c, s := e.connect(&Config{DisableCarefulResume: true})
		time.Sleep(100 * time.Millisecond)
		if cr, sr := c.Stats().CarefulResume, s.Stats().CarefulResume; cr.Negotiated || sr.Negotiated || sr.BDPFramesSent != 0 {
			t.Errorf("client %+v, server %+v", cr, sr)
		}
		_ = c.CloseWithError(0, "")
	})
}
