package main

import (
	"net/netip"
	"os"

	"github.com/satquic/satquic/tunnel"
)

// openTUN creates the TUN interface of a tunnel end: its name, MTU,
// addresses and routes.
func openTUN(name string, mtu int, addrs, routes []netip.Prefix) (tunnel.Device, string, error) {
	t, err := tunnel.OpenTUN(tunnel.TUNConfig{Name: name, MTU: mtu, Addrs: addrs, Routes: routes})
	if err != nil {
		return nil, "", tunErr(err)
	}
	return t, t.Name(), nil
}

// checkTUNAccess fails early, before a connection is made, when this
// process cannot create TUN devices.
func checkTUNAccess() error {
	f, err := os.OpenFile("/dev/net/tun", os.O_RDWR, 0)
	if err != nil {
		return tunErr(err)
	}
	return f.Close()
}
