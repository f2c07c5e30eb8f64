package core

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/coresim"
)

// simNAT is a NAT in front of a simulated client: the client is reached
// through one outside port at a time, each a netsim endpoint at the
// client's IP address; rebind moves to the next port, and what arrives at
// an old one is lost from then on.
type simNAT struct {
	net     *netsim.Network
	inner   *simEndpoint
	ports   []netip.AddrPort
	cur     int
	dropped int
}

// natPort is one outside port of a simNAT.
type natPort struct {
	nat *simNAT
	i   int
}

func (p natPort) Receive(now time.Duration, from netip.AddrPort, data []byte) {
	p.ReceiveECN(now, from, data, 0)
}

func (p natPort) ReceiveECN(now time.Duration, from netip.AddrPort, data []byte, cp netsim.ECN) {
	if p.i != p.nat.cur {
		p.nat.dropped++
		return
	}
	p.nat.inner.ReceiveECN(now, from, data, cp)
}

func (p natPort) Poll(now time.Duration) ([]netsim.Datagram, time.Duration, bool) {
	if p.i != p.nat.cur {
		return nil, 0, false
	}
	return p.nat.inner.Poll(now)
}

// rebind moves the client to the NAT's next outside port, at once.
func (n *simNAT) rebind(t *testing.T) {
	n.cur++
	if err := n.net.Wake(n.ports[n.cur]); err != nil {
		t.Fatal(err)
	}
}

// newNATSimPair is newSimPair with the client behind a simNAT whose
// outside ports are ports.
func newNATSimPair(t *testing.T, prof netsim.Profile, seed uint64, ccfg, scfg *Config, ports ...uint16) (*simPair, *simNAT) {
	t.Helper()
	n := netsim.NewNetwork(netsim.NetworkConfig{Seed: seed})
	path, err := n.AddProfilePath(clientAddr.Addr(), serverAddr.Addr(), prof)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	sp := &simPair{net: n, path: path, client: newSimEndpoint(coresim.NewClient(conn))}
	sp.client.conn = conn
	sp.server = newSimEndpoint(coresim.NewServer(func(now time.Duration, d Datagram) (*Conn, bool) {
		info, err := PeekInitial(d.Data)
		if err != nil {
			return nil, false
		}
		c, err := NewServerConn(scfg, now, ServerParams{RemoteAddr: d.Addr, OriginalDestConnID: info.DstConnID})
		if err != nil {
			t.Fatalf("NewServerConn: %v", err)
		}
		sp.server.conn = c
		return c, true
	}))
	if err := n.Attach(serverAddr, sp.server); err != nil {
		t.Fatal(err)
	}
	nat := &simNAT{net: n, inner: sp.client}
	for i, port := range ports {
		addr := netip.AddrPortFrom(clientAddr.Addr(), port)
		nat.ports = append(nat.ports, addr)
		if err := n.Attach(addr, natPort{nat: nat, i: i}); err != nil {
			t.Fatal(err)
		}
	}
	return sp, nat
}

// A NAT rebinding of the client's port during a download over the
// starlink profile (25 ms each way, jitter, bursty loss), the moment the
// client acknowledged all it had: the server's packets are lost at the
// old port and the client has nothing to say. A probe timeout later the
// client sends its silence PING from the new port; the server follows it,
// keeps its congestion state (a port change), and sends its challenge and
// at once the oldest data it had in flight, within three times the PING's
// 1200 bytes. The download completes intact after a stall of one PTO and
// one round trip: 162.23 ms with this seed.
func TestSimNATRebindingStarlink(t *testing.T) {
	prof := profile(t, "starlink")
	ccfg, scfg := testConfigs(t, 51)
	sp, nat := newNATSimPair(t, prof, 51, ccfg, scfg, 4433, 50000)
	const size = 16 << 20
	d := newDownload(t, size)
	sp.server.app = d.server
	read := d.clientApp(sp)
	var readAt []time.Duration
	sp.client.app = func(now time.Duration, c *Conn) {
		before := d.got
		read(now, c)
		if d.got > before {
			readAt = append(readAt, now)
		}
	}
	sp.run(t, func() bool { return d.got >= 4<<20 }, 20*time.Second)
	rebindAt := sp.net.Now()
	client := sp.client.conn
	heard := client.path.heardAt
	rtt, pto := client.sender.RTT().SmoothedRTT(), probeTimeout(client.sender.RTT())
	nat.rebind(t)
	sp.run(t, func() bool { return d.done }, 60*time.Second)
	if d.got != size {
		t.Fatalf("received %d bytes, want %d", d.got, size)
	}
	// The stall: from the last datagram the client heard before the
	// rebinding to the first data it read after.
	i := slices.IndexFunc(readAt, func(at time.Duration) bool { return at > rebindAt })
	stall := readAt[i] - heard
	st := sp.server.conn.Stats().Path
	t.Logf("rebinding at %v, last heard %v: stall %v (client's smoothed RTT %v, PTO %v), %d datagrams lost at the old port, done at %v; server %+v; client %+v",
		rebindAt, heard, stall, rtt, pto, nat.dropped, d.doneAt, st, client.Stats().Path)
	if sp.server.conn.RemoteAddr() != nat.ports[1] {
		t.Errorf("the server sends to %v, not %v", sp.server.conn.RemoteAddr(), nat.ports[1])
	}
	if st.PeerAddressChanges != 1 || st.PortChanges != 1 || st.ValidationsSucceeded != 1 || st.CongestionResets != 0 {
		t.Errorf("server path stats %+v", st)
	}
	// The client's silence PING goes a PTO after it last heard from the
	// server, and the server's challenge and probes come back with data a
	// round trip later (its jitter aside: 3 ms each way).
	if stall > pto+rtt+6*time.Millisecond {
		t.Errorf("the download stalled %v after the rebinding, more than a PTO and an RTT (%v)", stall, pto+rtt)
	}
	if want := 162230008 * time.Nanosecond; stall != want {
		t.Errorf("the download stalled %v after the rebinding, want exactly %v", stall, want)
	}
	if cs := client.Stats().Path; cs.SilencePings != 1 {
		t.Errorf("the client sent %d silence PINGs, want 1", cs.SilencePings)
	}
}
