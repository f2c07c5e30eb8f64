package main

import (
	"flag"
	"fmt"

	"github.com/satquic/satquic/quic"
)

// serveLimits are serve's bounds on what clients can make it hold
// (quic.Config.MaxHandshakes and the others).
type serveLimits struct {
	handshakes      int
	handshakesPerIP int
	conns           int
	connsPerIP      int
}

func (o *serveLimits) register(fs *flag.FlagSet) {
	o.registerWith(fs, quic.DefaultMaxConnectionsPerIP)
}

// registerWith registers the flags with connsPerIP as the default of
// --max-conns-per-ip.
func (o *serveLimits) registerWith(fs *flag.FlagSet, connsPerIP int) {
	fs.IntVar(&o.handshakes, "max-handshakes", quic.DefaultMaxHandshakes,
		"handshakes in progress at once; beyond, a new client replaces the one silent the longest (for a probe timeout or more) or is refused")
	fs.IntVar(&o.handshakesPerIP, "max-handshakes-per-ip", quic.DefaultMaxHandshakesPerIP,
		"handshakes in progress from one IPv4 address or IPv6 /64, whatever its ports; beyond, it is refused (or sent a Retry)")
	fs.IntVar(&o.conns, "max-conns", quic.DefaultMaxConnections,
		"connections held, handshakes included; beyond, a new client replaces one idle for half the idle timeout or is refused")
	fs.IntVar(&o.connsPerIP, "max-conns-per-ip", connsPerIP,
		"connections held from one IPv4 address or IPv6 /64, handshakes included")
}

// apply checks the limits and sets them in conf.
func (o *serveLimits) apply(conf *quic.Config) error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"--max-handshakes", o.handshakes},
		{"--max-handshakes-per-ip", o.handshakesPerIP},
		{"--max-conns", o.conns},
		{"--max-conns-per-ip", o.connsPerIP},
	} {
		if f.v < 1 {
			return fmt.Errorf("%w: %s must be at least 1", errUsage, f.name)
		}
	}
	conf.MaxHandshakes, conf.MaxHandshakesPerIP = o.handshakes, o.handshakesPerIP
	conf.MaxConnections, conf.MaxConnectionsPerIP = o.conns, o.connsPerIP
	return nil
}
