package quic

import (
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// coreConfig puts the congestion control and FEC settings where the core
// reads them.
func TestCoreConfigMapping(t *testing.T) {
	c := &Config{
		InitialRTT:              600 * time.Millisecond,
		CongestionControl:       NewReno,
		MaxCongestionWindow:     8 << 20,
		DisablePacing:           true,
		DisableLongRTTSlowStart: true,
		FEC: &FECConfig{Controller: FECFixed, FixedSources: 10, FixedRepairs: 2, Policy: FECHide, DisableTailProtection: true,
			DisableDatagramOrder: true, DatagramHold: 7 * time.Millisecond},
	}
	cc, err := c.coreConfig(clientTLS())
	if err != nil {
		t.Fatal(err)
	}
	r := cc.Recovery
	if r.InitialRTT != 600*time.Millisecond || r.Algorithm != recovery.NewReno || r.MaxWindow != 8<<20 ||
		!r.Pacing.Disabled || !r.LongRTT.Disabled || r.FECPolicy != recovery.FECHide {
		t.Errorf("recovery config %+v", r)
	}
	f := cc.FEC
	if f == nil || f.Controller != core.FECFixed || f.Fixed.Sources != 10 || f.Fixed.Repairs != 2 || !f.NoTailProtection ||
		!f.NoDatagramOrder || f.DatagramHold != 7*time.Millisecond {
		t.Errorf("FEC config %+v", f)
	}
	for name, want := range map[string]recovery.Algorithm{"": recovery.BBR, CUBIC: recovery.CUBIC, NewReno: recovery.NewReno, BBR: recovery.BBR} {
		cc, err := (&Config{CongestionControl: name}).coreConfig(clientTLS())
		if err != nil || cc.Recovery.Algorithm != want {
			t.Errorf("CongestionControl %q: %v, %v", name, cc.Recovery.Algorithm, err)
		}
	}
	for _, bad := range []*Config{
		{CongestionControl: "vegas"},
		{MaxCongestionWindow: 100},
		{InitialRTT: -time.Second},
		{FEC: &FECConfig{Policy: "ignore"}},
		{FEC: &FECConfig{Controller: "hirt"}},
		{FEC: &FECConfig{DatagramHold: -time.Millisecond}},
	} {
		if _, err := bad.coreConfig(clientTLS()); err == nil {
			t.Errorf("%+v: accepted", *bad)
		} else if !errors.Is(err, errConfig) && !errors.Is(err, core.ErrConfig) {
			t.Errorf("%+v: %v", *bad, err)
		}
	}
}
