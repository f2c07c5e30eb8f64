//go:build linux

package interop

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/satquic/satquic/emulate"
	"github.com/satquic/satquic/interop/capture"
	"github.com/satquic/satquic/netsim"
)

// network is the emulated link of one cell, with the capture taken on
// it.
type network interface {
	clientHost() host
	serverHost() host
	// serverPort is the port servers listen on (0: any).
	serverPort() uint16
	// connect joins the link to a server that listens at addr and returns
	// the address clients send to.
	connect(addr netip.AddrPort) (netip.AddrPort, error)
	// finish takes the link down and returns the capture and a line
	// about what the link did.
	finish() ([]capture.Record, string, error)
}

// relayNetwork is the emulator's UDP relay between the client and a tap
// in front of the server: client -> relay (the link) -> tap -> server,
// with a rebinding NAT between the relay and the tap when the scenario
// rebinds.
type relayNetwork struct {
	lo       host
	up, down netsim.LinkConfig
	rebind   rebinding
	tap      *tap
	nat      *rebinder
	relay    *emulate.Relay
}

func newRelayNetwork(ipv6 bool, up, down netsim.LinkConfig, rb rebinding) *relayNetwork {
	return &relayNetwork{lo: loopback(ipv6), up: up, down: down, rebind: rb}
}

func (r *relayNetwork) clientHost() host   { return r.lo }
func (r *relayNetwork) serverHost() host   { return r.lo }
func (r *relayNetwork) serverPort() uint16 { return 0 }

func (r *relayNetwork) connect(addr netip.AddrPort) (netip.AddrPort, error) {
	var err error
	if r.tap, err = startTap(r.lo.addr, addr); err != nil {
		return netip.AddrPort{}, fmt.Errorf("tap: %w", err)
	}
	upstream := r.tap.addr()
	if r.rebind.First > 0 {
		if r.nat, err = startRebinder(r.lo.addr, upstream, r.rebind.First, r.rebind.Every, r.rebind.Addr); err != nil {
			return netip.AddrPort{}, fmt.Errorf("rebinding NAT: %w", err)
		}
		upstream = r.nat.insideAddr()
	}
	r.relay, err = emulate.StartRelay(emulate.RelayConfig{
		Listen:   netip.AddrPortFrom(r.lo.addr, 0).String(),
		Upstream: upstream.String(),
		Up:       r.up, Down: r.down,
	})
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("relay: %w", err)
	}
	return r.relay.Addr(), nil
}

func (r *relayNetwork) finish() ([]capture.Record, string, error) {
	var records []capture.Record
	var summary string
	var errs []error
	if r.relay != nil {
		summary = linkSummary(r.relay.Stats())
		errs = append(errs, r.relay.Close())
	}
	if r.nat != nil {
		summary += fmt.Sprintf("; the NAT rebound %d times", r.nat.close())
	}
	if r.tap != nil {
		records = r.tap.close()
	}
	return records, summary, errors.Join(errs...)
}

// linkSummary says what the link did to the packets, for the report.
func linkSummary(s emulate.Stats) string {
	dir := func(d emulate.DirectionStats) string {
		out := fmt.Sprintf("%d delivered", d.Delivered)
		for _, c := range []struct {
			n    int64
			what string
		}{{d.DroppedLoss, "lost"}, {d.DroppedOutage, "blackholed"}, {d.DroppedQueue, "queue drops"}, {d.Corrupted, "corrupted"}} {
			if c.n > 0 {
				out += fmt.Sprintf(", %d %s", c.n, c.what)
			}
		}
		return out
	}
	return "up: " + dir(s.Up) + "; down: " + dir(s.Down)
}
