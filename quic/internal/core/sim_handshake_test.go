package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// serialization is the time a link at rateBps takes to send bytes.
func serialization(bytes int, rateBps float64) time.Duration {
	return time.Duration(float64(bytes) * 8 / rateBps * float64(time.Second))
}

// TestSimHandshake checks the handshake time over the p2p and geo
// profiles against the link model: the client completes when the last
// datagram of the server's first flight arrives, one round trip plus the
// serialization of both first flights after it started.
func TestSimHandshake(t *testing.T) {
	for _, name := range []string{"p2p", "geo"} {
		t.Run(name, func(t *testing.T) {
			prof := profile(t, name)
			ccfg, scfg := testConfigs(t, 10)
			var trace []netsim.Event
			sp := newSimPair(t, prof, 1, ccfg, scfg, func(e netsim.Event) { trace = append(trace, e) })
			sp.run(t, func() bool {
				return sp.server.conn != nil && sp.client.conn.HandshakeConfirmed() && sp.server.conn.HandshakeConfirmed()
			}, 30*time.Second)

			// The client's first flight is what it sent at 0; the server
			// answers with its whole first flight when the flight's last
			// datagram arrives.
			var up, down int
			for _, e := range trace {
				if e.Kind == netsim.EventSend && e.At == 0 && e.From == clientAddr {
					up += e.Size
				}
			}
			arrived := prof.Up.Delay + serialization(up, prof.Up.RateBps)
			var lastServer time.Duration
			for _, e := range trace {
				if e.Kind == netsim.EventSend && e.From == serverAddr && e.At == arrived {
					down += e.Size
				}
				if e.Kind == netsim.EventReceive && e.To == clientAddr && e.At <= sp.client.completedAt {
					lastServer = e.At
				}
			}
			// The server's Initial ACK of the first datagram went out
			// before, so the link is idle again when the flight starts.
			want := arrived + prof.Down.Delay + serialization(down, prof.Down.RateBps)
			if down < 2000 {
				t.Errorf("server sent %d bytes when the client's flight arrived at %v", down, arrived)
			}
			if sp.client.completedAt != want || lastServer != want {
				t.Errorf("client completed at %v (last server datagram %v), want %v", sp.client.completedAt, lastServer, want)
			}
			t.Logf("%s: client flight %d B, server flight %d B, complete at %v, confirmed by %v", name, up, down, sp.client.completedAt, sp.net.Now())
			for _, c := range []*Conn{sp.client.conn, sp.server.conn} {
				if st := c.Stats(); st.PacketsLost != 0 || st.Recovery.PTOs != 0 {
					t.Errorf("client=%v: %d lost, %d PTOs on a loss-free path", c.isClient, st.PacketsLost, st.Recovery.PTOs)
				}
			}
		})
	}
}
