package main

import (
	"flag"
	"io"
	"testing"

	"github.com/satquic/satquic/quic"
)

// The FEC flags: on by default, --no-fec (and --no-fec=false) as users
// write booleans, and each value checked at parse time.
func TestFECFlags(t *testing.T) {
	parse := func(args ...string) (*quic.Config, error) {
		var o quicOptions
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.register(fs)
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		return o.config(), nil
	}
	c, err := parse()
	if err != nil || c.FEC == nil || c.FEC.Policy != quic.FECAuto {
		t.Fatalf("default: %+v, %v", c, err)
	}
	for _, tc := range []struct {
		args []string
		on   bool
	}{{[]string{"--no-fec"}, false}, {[]string{"--no-fec=true"}, false}, {[]string{"--no-fec=false"}, true}} {
		c, err := parse(tc.args...)
		if err != nil || (c.FEC != nil) != tc.on {
			t.Errorf("%q: FEC %+v, %v", tc.args, c.FEC, err)
		}
	}
	c, err = parse("--fec-policy", "hide", "--fec-max-overhead", "0.1", "--fec-window", "300", "--fec-controller", "fixed")
	if err != nil || c.FEC.Policy != quic.FECHide || c.FEC.MaxOverhead != 0.1 || c.FEC.MaxWindow != 300 || c.FEC.Controller != quic.FECFixed {
		t.Errorf("tuned: %+v, %v", c.FEC, err)
	}
	for _, policy := range []string{quic.FECAuto, quic.FECSignal, quic.FECHide} {
		if c, err := parse("--fec-policy", policy); err != nil || c.FEC.Policy != policy {
			t.Errorf("--fec-policy %s: %+v, %v", policy, c, err)
		}
	}
	for _, bad := range [][]string{{"--no-fec=maybe"}, {"--fec-policy", "x"}, {"--fec-max-overhead", "1"}, {"--fec-max-overhead", "NaN"}, {"--fec-window", "0"}, {"--fec-window", "5000"}, {"--fec-controller", "hirt"}} {
		if _, err := parse(bad...); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
