package tunnel

import (
	"net"
	"net/netip"
	"testing"

	"github.com/satquic/satquic/internal/testkit"
)

// TestTUNReconfigure: a reconnected tunnel's new address, routes and
// smaller MTU replace the old on the open interface, which then carries
// packets between the new address and a new route; an MTU above the one
// the interface was opened with is refused.
func TestTUNReconfigure(t *testing.T) {
	testkit.RequireNamespaces(t, "the TUN device test")
	inNewNetns(t, func() {
		old := TUNConfig{
			Name: "sqtun0", MTU: 1400,
			Addrs:  []netip.Prefix{netip.MustParsePrefix("10.99.0.1/32"), netip.MustParsePrefix("fd00:99::1/128")},
			Routes: []netip.Prefix{netip.MustParsePrefix("10.99.1.0/24"), netip.MustParsePrefix("fd00:99:1::/64")},
		}
		tun, err := OpenTUN(old)
		if err != nil {
			t.Error(err)
			return
		}
		defer tun.Close()
		cfg := TUNConfig{
			MTU:    1350,
			Addrs:  []netip.Prefix{netip.MustParsePrefix("10.99.0.7/32"), netip.MustParsePrefix("fd00:99::1/128")},
			Routes: []netip.Prefix{netip.MustParsePrefix("10.99.2.0/24"), netip.MustParsePrefix("fd00:99:1::/64")},
		}
		if err := tun.Reconfigure(old, cfg); err != nil {
			t.Error(err)
			return
		}
		ifc, err := net.InterfaceByName("sqtun0")
		if err != nil || ifc.MTU != 1350 {
			t.Errorf("interface: %+v, %v", ifc, err)
			return
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			t.Error(err)
			return
		}
		var have []string
		for _, a := range addrs {
			have = append(have, a.String())
		}
		if len(have) != 2 || have[0] != "10.99.0.7/32" || have[1] != "fd00:99::1/128" {
			t.Errorf("addresses after reconfiguration: %v", have)
		}
		checkTUNPath(t, tun, netip.MustParseAddr("10.99.0.7"), netip.MustParseAddr("10.99.2.5"))
		if _, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.ParseIP("10.99.1.5"), Port: 9}); err == nil {
			t.Error("the old route is still there")
		}
		bigger := cfg
		bigger.MTU = 1500
		if err := tun.Reconfigure(cfg, bigger); err == nil {
			t.Error("an MTU above the interface's buffers was accepted")
		}
	})
}
