package core

import (
	"errors"
	"testing"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// A zero Recovery takes loss recovery's defaults, with the connection's
// datagram size and role.
func TestConfigRecoveryDefaults(t *testing.T) {
	ccfg, _ := testConfigs(t, 1)
	ccfg.MaxDatagramSize = 1400
	d, err := ccfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := recovery.DefaultConfig()
	want.MaxDatagramSize, want.IsServer = 1400, true
	if got := d.recoveryConfig(true); got != want {
		t.Errorf("recovery config\n%+v\nwant\n%+v", got, want)
	}
}

// Check reports a loss recovery field out of range, as loss recovery
// would when the connection starts.
func TestConfigRecoveryValidation(t *testing.T) {
	for name, mod := range map[string]func(*recovery.Config){
		"initial rtt": func(r *recovery.Config) { r.InitialRTT = -1 },
		"max window":  func(r *recovery.Config) { r.MaxWindow = 100 },
		"algorithm":   func(r *recovery.Config) { r.Algorithm = 9 },
		"fec policy":  func(r *recovery.Config) { r.FECPolicy = 7 },
	} {
		ccfg, _ := testConfigs(t, 1)
		mod(&ccfg.Recovery)
		if err := ccfg.Check(); !errors.Is(err, ErrConfig) || !errors.Is(err, recovery.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrConfig and recovery.ErrInvalidConfig", name, err)
		}
	}
}

// The controllers take their windows from the sending window: the fixed
// one covers Sources (or Window) within it, the adaptive one plans within
// it and Adaptive.MaxWindow.
func TestFECConfigControllers(t *testing.T) {
	for _, tc := range []struct {
		cfg    FECConfig
		window int
		want   int
	}{
		{FECConfig{Controller: FECFixed}, 1024, 20},
		{FECConfig{Controller: FECFixed, Fixed: fec.FixedConfig{Sources: 50}}, 30, 30},
		{FECConfig{Controller: FECFixed, Fixed: fec.FixedConfig{Window: 100}}, 1024, 100},
		{FECConfig{}, 40, 40},
		{FECConfig{Adaptive: fec.AdaptiveConfig{MaxWindow: 32}}, 1024, 32},
	} {
		d, err := tc.cfg.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		ctrl, err := d.newController(tc.window)
		if err != nil {
			t.Fatalf("%+v: %v", tc.cfg, err)
		}
		got := ctrl.Window()
		if tc.cfg.Controller == FECFixed && got != tc.want || got > tc.want {
			t.Errorf("%+v over %d: window %d, want %d", tc.cfg, tc.window, got, tc.want)
		}
	}
	for _, bad := range []FECConfig{
		{MaxWindow: 5000},
		{Fixed: fec.FixedConfig{Repairs: -1}},
		{Fixed: fec.FixedConfig{Window: -1}},
		{Adaptive: fec.AdaptiveConfig{MinWindow: -1}},
		{MaxOverhead: 1},
	} {
		if _, err := bad.withDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", bad, err)
		}
	}
}
