package main

import (
	"errors"
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

// reconfigureTUN changes a tunnel end's TUN interface from old to cfg
// (tunnel.TUN.Reconfigure).
func reconfigureTUN(dev tunnel.Device, old, cfg tunSetup) error {
	t, ok := dev.(*tunnel.TUN)
	if !ok {
		return errors.New("the device is not a TUN interface")
	}
	return t.Reconfigure(old.config(), cfg.config())
}

func (s tunSetup) config() tunnel.TUNConfig {
	return tunnel.TUNConfig{MTU: s.mtu, Addrs: s.addrs, Routes: s.routes}
}
