package main

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sync"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/gateway"
	"github.com/satquic/satquic/tunnel"
)

// tunSetup is what a tunnel client's TUN interface is configured with.
type tunSetup struct {
	mtu           int
	addrs, routes []netip.Prefix
}

func (s tunSetup) equal(o tunSetup) bool {
	return s.mtu == o.mtu && slices.Equal(s.addrs, o.addrs) && slices.Equal(s.routes, o.routes)
}

// clientConn is the client's current tunnel, which a reconnection
// replaces, and the configuration its TUN interface has.
type clientConn struct {
	mu    sync.Mutex
	ct    *gateway.ClientTunnel
	setup tunSetup
}

func (c *clientConn) get() *gateway.ClientTunnel {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ct
}

// adopt makes ct, a new connection, the current one, first changing the
// interface if the server now assigns other addresses, advertises other
// routes or the path carries another MTU (never more than the interface
// was opened with: its buffers have that size). An interface that cannot
// be changed ends the client: its addresses would not match the tunnel's.
func (c *clientConn) adopt(ct *gateway.ClientTunnel, o *tunnelClientOptions, dev tunnel.Device, name string, stderr io.Writer) error {
	setup, _ := o.setupFor(ct, dev.MTU())
	c.mu.Lock()
	old := c.setup
	c.mu.Unlock()
	if !setup.equal(old) {
		if err := reconfigureTUN(dev, old, setup); err != nil {
			return fmt.Errorf("the server's new configuration (%s, MTU %d, routes %s) cannot be applied to %s: %w",
				prefixesText(setup.addrs), setup.mtu, prefixesText(setup.routes), name, err)
		}
		fmt.Fprintf(stderr, "satquic tunnel client: interface %s reconfigured: %s, MTU %d, routes %s\n",
			name, prefixesText(setup.addrs), setup.mtu, prefixesText(setup.routes))
	}
	c.mu.Lock()
	c.ct, c.setup = ct, setup
	c.mu.Unlock()
	return nil
}

// reconnectsText is the --stats line's part about reconnections: their
// count, the time spent without a tunnel and the packets the device gave
// meanwhile, dropped.
func reconnectsText(rd *redialer[*gateway.ClientTunnel], st tunnel.Stats) string {
	if rd == nil {
		return "reconnects off"
	}
	n, down := rd.stats()
	return fmt.Sprintf("reconnects %d, without tunnel %v (dropped %d)", n, roundDelay(down), st.DownDrops)
}

// clientFinalStats is the client's --json object.
type clientFinalStats struct {
	Prefixes     []netip.Prefix         `json:"prefixes"`
	MTU          int                    `json:"mtu"`
	PathTooSmall uint64                 `json:"path_too_small"`
	Reconnects   uint64                 `json:"reconnects"`
	DownSeconds  float64                `json:"down_seconds"`
	Transport    gateway.TransportStats `json:"transport"`
	Session      connectip.Stats        `json:"session"`
	Tunnel       tunnel.Stats           `json:"tunnel"`
}

// clientFinal is the client's final statistics: those of the last
// connection, the Forwarder's over the whole run.
func clientFinal(c *clientConn, fwd *tunnel.Forwarder, rd *redialer[*gateway.ClientTunnel]) clientFinalStats {
	c.mu.Lock()
	ct, setup := c.ct, c.setup
	c.mu.Unlock()
	f := clientFinalStats{Prefixes: setup.addrs, MTU: setup.mtu, PathTooSmall: ct.PathTooSmall(),
		Transport: ct.TransportStats(), Session: ct.Session.Stats(), Tunnel: fwd.Stats()}
	if rd != nil {
		n, down := rd.stats()
		f.Reconnects, f.DownSeconds = n, down.Seconds()
	}
	return f
}
