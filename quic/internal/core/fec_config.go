package core

import (
	"fmt"
	"math"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// FEC inside the connection (see fec_send.go and fec_recv.go). An endpoint
// with Config.FEC offers it in the FEC transport parameter
// (wire.ParamFEC) with the largest window it decodes; it sends repair
// symbols only to a peer that offered it too, so a peer without FEC (any
// other QUIC stack) sees an unknown transport parameter and nothing else.

// fecCleanLoss is the loss rate of a clean path: the adaptive controller's
// prior, and the rate above which the sender spends more on small tails
// (fec_tail.go).
const fecCleanLoss = 0.002

// Defaults of FECConfig.
const (
	DefaultFECMaxWindow   = 1024
	DefaultFECMaxOverhead = 0.25
)

// FECController names a redundancy controller of package fec.
type FECController uint8

const (
	// FECAdaptive is satquic's controller: proactive repairs at a rate
	// that follows the loss and burst lengths measured from ACKs, and
	// reactive repairs aimed at what is still missing
	// (fec.AdaptiveController).
	FECAdaptive FECController = iota
	// FECFixed sends FixedRepairs repairs every FixedSources sources
	// (fec.FixedController), whatever the loss.
	FECFixed
)

func (c FECController) String() string {
	switch c {
	case FECAdaptive:
		return "adaptive"
	case FECFixed:
		return "fixed"
	}
	return "invalid"
}

// FECConfig enables forward erasure correction: the 1-RTT packets that
// carry stream data become source symbols of the RFC 8681 sliding-window
// code, and repair symbols travel in FEC_REPAIR frames, congestion
// controlled and paced like any packet. Zero fields take their defaults.
type FECConfig struct {
	// MaxWindow bounds the source symbols a repair covers, and is the
	// window this endpoint offers to decode (default 1024, at most 4095).
	// The decoder keeps that many symbols: about 1.2 MB per connection
	// at the default.
	MaxWindow int
	// Controller selects the redundancy controller (adaptive by default).
	Controller FECController
	// FixedSources and FixedRepairs are the code rate of the fixed
	// controller (default 20 and 1).
	FixedSources, FixedRepairs int
	// MaxOverhead caps repair symbols as a share of the source and
	// repair symbols sent (default 0.25): a controller that asks for more
	// is held back.
	MaxOverhead float64
	// Policy says whether packets the peer recovered count as congestion
	// (recovery.FECSignal, the default, as RFC 9265 recommends) or not
	// (recovery.FECHide, for paths known to lose packets without
	// congestion).
	Policy recovery.FECPolicy
	// NoTailProtection turns off the repairs sent when the application
	// stops sending (default on), which spare the last packets of a
	// burst a probe timeout.
	NoTailProtection bool
}

func (f *FECConfig) withDefaults() (FECConfig, error) {
	d := *f
	setDefault(&d.MaxWindow, DefaultFECMaxWindow)
	setDefault(&d.FixedSources, 20)
	setDefault(&d.FixedRepairs, 1)
	setDefault(&d.MaxOverhead, DefaultFECMaxOverhead)
	switch {
	case d.MaxWindow < 1 || d.MaxWindow > fec.MaxNSS:
		return d, fmt.Errorf("%w: FEC MaxWindow %d out of [1, %d]", ErrConfig, d.MaxWindow, fec.MaxNSS)
	case d.Controller != FECAdaptive && d.Controller != FECFixed:
		return d, fmt.Errorf("%w: unknown FEC controller %d", ErrConfig, d.Controller)
	case d.FixedSources < 1 || d.FixedRepairs < 0:
		return d, fmt.Errorf("%w: FEC fixed rate %d:%d", ErrConfig, d.FixedSources, d.FixedRepairs)
	case math.IsNaN(d.MaxOverhead) || d.MaxOverhead <= 0 || d.MaxOverhead >= 1:
		return d, fmt.Errorf("%w: FEC MaxOverhead %v out of (0, 1)", ErrConfig, d.MaxOverhead)
	case d.Policy != recovery.FECSignal && d.Policy != recovery.FECHide:
		return d, fmt.Errorf("%w: unknown FEC policy %d", ErrConfig, d.Policy)
	}
	return d, nil
}

// newController builds the redundancy controller for a sending window of
// window symbols.
func (f *FECConfig) newController(window int) (fec.Controller, error) {
	if f.Controller == FECFixed {
		return fec.NewFixedController(fec.FixedConfig{Sources: f.FixedSources, Repairs: f.FixedRepairs, Window: min(f.FixedSources, window)})
	}
	// The prior is a clean path (fecCleanLoss, worth 500 packets): a
	// connection starts with a few repairs per thousand packets, which
	// slow start can afford, and learns the real loss within a few round
	// trips.
	return fec.NewAdaptiveController(fec.AdaptiveConfig{
		MinWindow:    min(64, window),
		MaxWindow:    window,
		InitialLoss:  fecCleanLoss,
		PriorSources: 500,
	})
}

// fecLocalParam is the value of the FEC transport parameter this endpoint
// sends.
func (f *FECConfig) localParam() []byte {
	return wire.FECParams{Scheme: wire.FECSchemeRLC, MaxWindow: uint64(f.MaxWindow)}.Append(nil)
}
