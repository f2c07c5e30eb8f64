//go:build !linux

package main

import (
	"net/netip"

	"github.com/satquic/satquic/tunnel"
)

// checkTUNAccess fails: the TUN devices of the tunnel are Linux's.
func checkTUNAccess() error { return errNotLinux }

// openTUN fails: the TUN devices of the tunnel are Linux's.
func openTUN(string, int, []netip.Prefix, []netip.Prefix) (tunnel.Device, string, error) {
	return nil, "", errNotLinux
}
