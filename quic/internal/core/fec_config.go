package core

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/satquic/satquic/fec"
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
	// DefaultFECFixedSources and DefaultFECFixedRepairs are the fixed
	// controller's code rate: one repair every 20 sources.
	DefaultFECFixedSources = 20
	DefaultFECFixedRepairs = 1
	// The adaptive controller starts from a clean path (fecCleanLoss),
	// a prior worth DefaultFECAdaptivePrior sources: a connection starts
	// with a few repairs per thousand packets, which slow start can
	// afford, and learns the real loss within a few round trips. Its
	// proactive window starts at DefaultFECAdaptiveMinWindow sources.
	DefaultFECAdaptivePrior     = 500
	DefaultFECAdaptiveMinWindow = 64
)

// FECController names a redundancy controller of package fec.
type FECController uint8

const (
	// FECAdaptive is satquic's controller: proactive repairs at a rate
	// that follows the loss and burst lengths measured from ACKs, and
	// reactive repairs aimed at what is still missing
	// (fec.AdaptiveController).
	FECAdaptive FECController = iota
	// FECFixed sends Fixed.Repairs repairs every Fixed.Sources sources
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
// Whether packets the peer rebuilt count as congestion is loss recovery's
// to say (Config.Recovery.FECPolicy).
type FECConfig struct {
	// MaxWindow bounds the source symbols a repair covers, and is the
	// window this endpoint offers to decode (default 1024, at most 4095).
	// The decoder keeps that many symbols: about 1.2 MB per connection
	// at the default.
	MaxWindow int
	// Controller selects the redundancy controller (adaptive by default).
	Controller FECController
	// Fixed configures the fixed controller: its code rate (Sources and
	// Repairs, default 20 and 1) and the sources a repair covers (Window,
	// default Sources). The sending window bounds Window.
	Fixed fec.FixedConfig
	// Adaptive configures the adaptive controller. Its zero fields take
	// package fec's defaults, except the prior, a clean path
	// (InitialLoss 0.002 worth PriorSources 500), and MinWindow (64). The
	// sending window bounds MaxWindow (the sending window if zero), which
	// bounds MinWindow.
	Adaptive fec.AdaptiveConfig
	// MaxOverhead caps the repair data sent as a share of the source
	// symbols sent, in bytes (default 0.25): every repair, proactive,
	// reactive or over a tail, is paid from an allowance that sources
	// earn (fec_budget.go), and one it cannot pay is held back.
	MaxOverhead float64
	// notPadded: this endpoint does not offer to take padded source
	// packets (ParamFECPaddedSources), as an endpoint built before them;
	// for tests.
	notPadded bool
	// NoTailProtection turns off the repairs sent when the application
	// stops sending (default on), which spare the last packets of a
	// burst a probe timeout.
	NoTailProtection bool
	// NoLossRepair turns off the repairs sent when loss detection
	// declares lost sources that are not sent again (DATAGRAM frames),
	// and the repairs sent as probes over them (fec_lossrepair.go;
	// default on).
	NoLossRepair bool
	// NoDatagramOrder turns off the in-order delivery of the DATAGRAM
	// frames of source packets: a datagram that arrives while a source
	// packet sent before it is missing waits for that packet's rebuild,
	// at most DatagramHold, so that a tunnelled TCP does not see each
	// repaired loss as reordering (fec_order.go; default on).
	NoDatagramOrder bool
	// DatagramHold bounds that wait. Zero: the smoothed RTT plus four
	// times its variation (at least 1 ms), about when the repair that
	// the sender's loss detection calls for arrives.
	DatagramHold time.Duration
}

func (f *FECConfig) withDefaults() (FECConfig, error) {
	d := *f
	setDefault(&d.MaxWindow, DefaultFECMaxWindow)
	setDefault(&d.Fixed.Sources, DefaultFECFixedSources)
	setDefault(&d.Fixed.Repairs, DefaultFECFixedRepairs)
	setDefault(&d.Adaptive.MinWindow, DefaultFECAdaptiveMinWindow)
	setDefault(&d.Adaptive.InitialLoss, fecCleanLoss)
	setDefault(&d.Adaptive.PriorSources, DefaultFECAdaptivePrior)
	setDefault(&d.MaxOverhead, DefaultFECMaxOverhead)
	switch {
	case d.MaxWindow < 1 || d.MaxWindow > fec.MaxNSS:
		return d, fmt.Errorf("%w: FEC MaxWindow %d out of [1, %d]", ErrConfig, d.MaxWindow, fec.MaxNSS)
	case d.Controller != FECAdaptive && d.Controller != FECFixed:
		return d, fmt.Errorf("%w: unknown FEC controller %d", ErrConfig, d.Controller)
	case d.Fixed.Sources < 1 || d.Fixed.Repairs < 0:
		return d, fmt.Errorf("%w: FEC fixed rate %d:%d", ErrConfig, d.Fixed.Sources, d.Fixed.Repairs)
	case d.Fixed.Window < 0 || d.Adaptive.MinWindow < 0 || d.Adaptive.MaxWindow < 0:
		return d, fmt.Errorf("%w: negative FEC controller window", ErrConfig)
	case d.DatagramHold < 0:
		return d, fmt.Errorf("%w: negative FEC DatagramHold %v", ErrConfig, d.DatagramHold)
	case math.IsNaN(d.MaxOverhead) || d.MaxOverhead <= 0 || d.MaxOverhead >= 1:
		return d, fmt.Errorf("%w: FEC MaxOverhead %v out of (0, 1)", ErrConfig, d.MaxOverhead)
	}
	return d, nil
}

// newController builds the redundancy controller for a sending window of
// window symbols, the smaller of MaxWindow and the peer's.
func (f *FECConfig) newController(window int) (fec.Controller, error) {
	if f.Controller == FECFixed {
		c := f.Fixed
		c.Window = min(cmp.Or(c.Window, c.Sources), window)
		return fec.NewFixedController(c)
	}
	c := f.Adaptive
	c.MaxWindow = min(cmp.Or(c.MaxWindow, window), window)
	c.MinWindow = min(c.MinWindow, c.MaxWindow)
	return fec.NewAdaptiveController(c)
}

// fecLocalParam is the value of the FEC transport parameter this endpoint
// sends.
func (f *FECConfig) localParam() []byte {
	return wire.FECParams{Scheme: wire.FECSchemeRLC, MaxWindow: uint64(f.MaxWindow)}.Append(nil)
}
