package loss

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

// Model is a per-packet loss process.
type Model interface {
	// Drop reports whether the next packet is lost, and advances the model.
	Drop() bool
	// Mean is the model's long-run loss probability, for reports and checks.
	Mean() float64
	// String is the canonical spec of the model (see Parse).
	String() string
}

// ErrSpec is wrapped by every error Parse returns for a malformed spec.
var ErrSpec = errors.New("invalid loss spec")

// Parse builds the model a spec describes (see the package comment for the
// grammar). Random models draw from a PCG source seeded with seed; the other
// models ignore it. An empty spec means "none".
func Parse(spec string, seed uint64) (Model, error) {
	kind, args, hasArgs := strings.Cut(strings.TrimSpace(spec), ":")
	m, err := parseKind(kind, args, hasArgs, seed)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrSpec, spec, err)
	}
	return m, nil
}

func parseKind(kind, args string, hasArgs bool, seed uint64) (Model, error) {
	if kind == "" || kind == "none" {
		if hasArgs {
			return nil, errors.New("none takes no parameters")
		}
		return None{}, nil
	}
	if !hasArgs {
		return nil, fmt.Errorf("%s needs parameters after ':'", kind)
	}
	switch kind {
	case "uniform":
		return parseUniform(args, seed)
	case "ge":
		return parseGilbertElliott(args, seed)
	case "burst":
		return parseBurst(args, seed)
	case "drop":
		return parseDropList(args)
	case "trace":
		return loadTraceFile(args)
	case "pattern":
		return NewTrace(args)
	}
	return nil, fmt.Errorf("unknown loss model %q (want none, uniform, ge, burst, drop, trace or pattern)", kind)
}

// newRand returns the generator every random model draws from. The second
// PCG word is derived from the seed so that seed 0 is as good as any other.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// loadTraceFile reads a trace spec's file.
func loadTraceFile(path string) (Model, error) {
	if path == "" {
		return nil, errors.New("trace needs a file name")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	t, err := NewTrace(string(data))
	if err != nil {
		return nil, fmt.Errorf("trace file %s: %w", path, err)
	}
	t.name = path
	return t, nil
}

// None never drops.
type None struct{}

// Drop always reports false.
func (None) Drop() bool { return false }

// Mean is 0.
func (None) Mean() float64 { return 0 }

// String is "none".
func (None) String() string { return "none" }
