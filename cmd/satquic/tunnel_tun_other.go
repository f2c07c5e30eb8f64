//go:build !linux

package main

import (
	"errors"
	"net/netip"

	"github.com/satquic/satquic/tunnel"
)

// errNotLinux is the error of the TUN device elsewhere than Linux.
var errNotLinux = errors.New("satquic tunnel needs Linux TUN devices")

// checkTUNAccess fails: the TUN devices of the tunnel are Linux's.
func checkTUNAccess() error { return errNotLinux }

// openTUN fails: the TUN devices of the tunnel are Linux's.
func openTUN(string, int, []netip.Prefix, []netip.Prefix) (tunnel.Device, string, error) {
	return nil, "", errNotLinux
}

// reconfigureTUN fails: the TUN devices of the tunnel are Linux's.
func reconfigureTUN(tunnel.Device, tunSetup, tunSetup) error { return errNotLinux }
