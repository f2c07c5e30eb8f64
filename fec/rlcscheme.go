package fec

import (
	"errors"
	"fmt"
)

// The RLC scheme: the sliding-window Encoder driven by a redundancy
// Controller, seen through the SchemeEncoder interface. The controller
// decides when repairs go out and over how many sources; the Encoder
// builds them (RFC 8681 section 3.5). On the receiving side the plain
// Decoder is already a SchemeDecoder; give it a MaxWindow at least the
// encoder's, and run a LossMonitor with the controller's FeedbackPolicy
// beside it when the controller wants feedback.

// RLCConfig configures an RLC scheme encoder.
type RLCConfig struct {
	// Controller decides the repair schedule; required.
	Controller Controller
	// MaxWindow is how many recent sources the encoder keeps, which
	// bounds every repair's window; 0 means 4095 (the RFC 8681 maximum).
	MaxWindow int
	// DT is the density threshold (RFC 8681 section 3.6); nil means 15,
	// the dense code.
	DT *uint8
	// MaxSymbolSize is the largest source payload; 0 means 65533.
	MaxSymbolSize int
	// FirstESI is the ESI of the first source.
	FirstESI uint32
}

// RLCEncoder is the SchemeEncoder of the RLC scheme.
type RLCEncoder struct {
	enc  *Encoder
	ctl  Controller
	bufs [][]byte // repair buffers, reused from call to call
	out  [][]byte
	err  error
}

var _ SchemeEncoder = (*RLCEncoder)(nil)

// NewRLCEncoder checks cfg and returns the encoder.
func NewRLCEncoder(cfg RLCConfig) (*RLCEncoder, error) {
	if cfg.Controller == nil {
		return nil, errors.New("fec: RLC scheme needs a controller")
	}
	dt := uint8(MaxDT)
	if cfg.DT != nil {
		dt = *cfg.DT
	}
	enc, err := NewEncoder(EncoderConfig{MaxWindow: cfg.MaxWindow, DT: dt, MaxSymbolSize: cfg.MaxSymbolSize, FirstESI: cfg.FirstESI})
	if err != nil {
		return nil, fmt.Errorf("fec: RLC scheme: %w", err)
	}
	return &RLCEncoder{enc: enc, ctl: cfg.Controller}, nil
}

// AddSource adds the payload as the next source symbol and returns the
// repairs the controller wants after it. A payload the encoder refuses
// (larger than MaxSymbolSize) yields no repairs and is recorded: see Err.
func (e *RLCEncoder) AddSource(payload []byte) [][]byte {
	esi, err := e.enc.AddSource(payload)
	if err != nil {
		e.fail(err)
		return nil
	}
	return e.repairs(e.ctl.OnSource(esi))
}

// OnFeedback passes the report to the controller and returns the repairs
// it asks for at once.
func (e *RLCEncoder) OnFeedback(fb Feedback) [][]byte {
	return e.repairs(e.ctl.OnFeedback(fb))
}

// repairs builds n repairs, each over the controller's current window.
func (e *RLCEncoder) repairs(n int) [][]byte {
	e.out = e.out[:0]
	for i := range n {
		if i == len(e.bufs) {
			e.bufs = append(e.bufs, nil)
		}
		e.enc.SetWindow(e.ctl.Window())
		buf, err := e.enc.AppendRepair(e.bufs[i][:0])
		if err != nil {
			// Only an empty window fails: no source was sent yet.
			e.fail(err)
			break
		}
		e.bufs[i] = buf
		e.out = append(e.out, buf)
	}
	return e.out
}

func (e *RLCEncoder) fail(err error) {
	if e.err == nil {
		e.err = fmt.Errorf("fec: RLC scheme: %w", err)
	}
}

// Err returns the first error the encoder met (a refused payload, a
// repair asked for before any source), or nil. The SchemeEncoder methods
// have no error result, so callers check here.
func (e *RLCEncoder) Err() error { return e.err }

// Controller returns the controller that drives the encoder.
func (e *RLCEncoder) Controller() Controller { return e.ctl }
