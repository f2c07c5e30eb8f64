package fecsim

import (
	"errors"
	"fmt"
	"strings"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/fec/baseline"
)

// Scheme names, as `satquic sim --scheme` takes them.
const (
	RLCAdaptive = "rlc-adaptive"
	RLCHIRT     = "rlc-hirt"
	RLCFixed    = "rlc-fixed"
	XOR         = "xor"
	RS          = "rs"
	Maelstrom   = "maelstrom"
)

// SchemeNames lists every scheme, in the order tables show them.
var SchemeNames = []string{RLCAdaptive, RLCHIRT, RLCFixed, XOR, RS, Maelstrom}

// ErrUnknownScheme is wrapped by the error for a scheme name not in
// SchemeNames.
var ErrUnknownScheme = errors.New("unknown scheme")

// Scheme defaults: HIRT as in its paper's simulator; the fixed-rate RLC
// and the block baselines at a rate near HIRT's at 1-3% loss.
const (
	DefaultFixedSources = 20
	DefaultFixedRepairs = 1
	DefaultXORK         = 10
	DefaultRSData       = 20
	DefaultRSParity     = 2
	DefaultMaelstrom    = "1-20:20"
	DefaultHIRTBeta     = 3
	DefaultHIRTWindow   = 200
	DefaultFixedWindow  = 200
)

// SchemeConfig names a scheme and its parameters. Zero parameters take the
// defaults above; parameters of other schemes are ignored.
type SchemeConfig struct {
	Name string
	// Window is the RLC window: HIRT's w, the fixed-rate window, and the
	// adaptive controller's largest window.
	Window int
	// FixedSources:FixedRepairs is rlc-fixed's rate.
	FixedSources, FixedRepairs int
	// XORK is the XOR block size.
	XORK int
	// RSData and RSParity are the Reed-Solomon block shape.
	RSData, RSParity int
	// Maelstrom is the layered XOR code, in the paper's notation
	// ("1-20:20").
	Maelstrom string
	// HIRTBeta is HIRT's b.
	HIRTBeta float64
	// Adaptive tunes rlc-adaptive; its MaxWindow is overridden by Window
	// when Window is set.
	Adaptive fec.AdaptiveConfig
}

// Label is a short description of the scheme and its main parameters, as
// the figures' legends show it.
func (c SchemeConfig) Label() string {
	c = c.withDefaults()
	switch c.Name {
	case RLCHIRT:
		return fmt.Sprintf("HIRT b=%g w=%d", c.HIRTBeta, c.Window)
	case RLCFixed:
		return fmt.Sprintf("RLC %d:%d w=%d", c.FixedSources, c.FixedRepairs, c.Window)
	case XOR:
		return fmt.Sprintf("XOR k=%d", c.XORK)
	case RS:
		return fmt.Sprintf("RS %d+%d", c.RSData, c.RSParity)
	case Maelstrom:
		return "M:" + c.Maelstrom
	case RLCAdaptive:
		if c.Window != 0 {
			return fmt.Sprintf("adaptive w<=%d", c.Window)
		}
		return "adaptive"
	}
	return c.Name
}

func (c SchemeConfig) withDefaults() SchemeConfig {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	switch c.Name {
	case RLCHIRT:
		def(&c.Window, DefaultHIRTWindow)
		if c.HIRTBeta == 0 {
			c.HIRTBeta = DefaultHIRTBeta
		}
	case RLCFixed:
		def(&c.Window, DefaultFixedWindow)
		def(&c.FixedSources, DefaultFixedSources)
		def(&c.FixedRepairs, DefaultFixedRepairs)
	case XOR:
		def(&c.XORK, DefaultXORK)
	case RS:
		def(&c.RSData, DefaultRSData)
		def(&c.RSParity, DefaultRSParity)
	case Maelstrom:
		if c.Maelstrom == "" {
			c.Maelstrom = DefaultMaelstrom
		}
	}
	return c
}

// pair is one run's encoder and decoder, with the feedback the encoder's
// controller asks for.
type pair struct {
	enc    fec.SchemeEncoder
	dec    fec.SchemeDecoder
	policy fec.FeedbackPolicy
	// check returns a sticky encoder error, if the encoder has one.
	check func() error
}

// build makes a fresh encoder and decoder. lossHint is the channel's mean
// loss, which HIRT's simulator gave its controller as initial estimate.
func (c SchemeConfig) build(lossHint float64, maxPayload int) (pair, error) {
	c = c.withDefaults()
	switch c.Name {
	case RLCAdaptive, RLCHIRT, RLCFixed:
		return c.buildRLC(lossHint, maxPayload)
	case XOR:
		enc, encErr := baseline.NewXOREncoder(c.XORK)
		dec, decErr := baseline.NewXORDecoder(c.XORK)
		return baselinePair(enc, encErr, dec, decErr)
	case RS:
		enc, encErr := baseline.NewRSEncoder(c.RSData, c.RSParity)
		dec, decErr := baseline.NewRSDecoder(c.RSData, c.RSParity)
		return baselinePair(enc, encErr, dec, decErr)
	case Maelstrom:
		mc, err := baseline.ParseMaelstrom(c.Maelstrom)
		if err != nil {
			return pair{}, err
		}
		enc, encErr := baseline.NewMaelstromEncoder(mc)
		dec, decErr := baseline.NewMaelstromDecoder(mc)
		return baselinePair(enc, encErr, dec, decErr)
	}
	return pair{}, fmt.Errorf("%w %q (want %s)", ErrUnknownScheme, c.Name, strings.Join(SchemeNames, ", "))
}

// baselinePair joins a baseline's encoder and decoder, or their errors.
func baselinePair(enc fec.SchemeEncoder, encErr error, dec fec.SchemeDecoder, decErr error) (pair, error) {
	if err := errors.Join(encErr, decErr); err != nil {
		return pair{}, err
	}
	return pair{enc: enc, dec: dec, check: func() error { return nil }}, nil
}

func (c SchemeConfig) buildRLC(lossHint float64, maxPayload int) (pair, error) {
	ctl, maxWindow, err := c.controller(lossHint)
	if err != nil {
		return pair{}, err
	}
	enc, err := fec.NewRLCEncoder(fec.RLCConfig{Controller: ctl, MaxWindow: maxWindow, MaxSymbolSize: maxPayload})
	if err != nil {
		return pair{}, err
	}
	dec, err := fec.NewDecoder(fec.DecoderConfig{MaxWindow: maxWindow, MaxSymbolSize: maxPayload})
	if err != nil {
		return pair{}, err
	}
	return pair{enc: enc, dec: dec, policy: ctl.FeedbackPolicy(), check: enc.Err}, nil
}

// controller builds the RLC controller and returns the largest window it
// may use.
func (c SchemeConfig) controller(lossHint float64) (fec.Controller, int, error) {
	switch c.Name {
	case RLCHIRT:
		ctl, err := fec.NewHIRTController(fec.HIRTConfig{Beta: c.HIRTBeta, Window: c.Window, InitialLoss: lossHint})
		return ctl, c.Window, err
	case RLCFixed:
		ctl, err := fec.NewFixedController(fec.FixedConfig{Sources: c.FixedSources, Repairs: c.FixedRepairs, Window: c.Window})
		return ctl, c.Window, err
	default:
		cfg := c.Adaptive
		if c.Window != 0 {
			cfg.MaxWindow = c.Window
			cfg.MinWindow = min(cfg.MinWindow, c.Window)
			if cfg.MinWindow == 0 {
				cfg.MinWindow = min(256, c.Window)
			}
		}
		ctl, err := fec.NewAdaptiveController(cfg)
		if err != nil {
			return nil, 0, err
		}
		return ctl, ctl.FeedbackPolicy().Horizon, nil
	}
}

// Validate builds the scheme once to check its parameters.
func (c SchemeConfig) Validate() error {
	_, err := c.build(0, DefaultMaxPayload)
	return err
}
