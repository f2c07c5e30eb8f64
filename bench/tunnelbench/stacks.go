//go:build linux

package tunnelbench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/satquic/satquic/quic"
)

// The stacks the requests run over.
const (
	// Direct: the HTTP connections cross the emulated link themselves.
	Direct = "direct"
	// TunnelNoFEC: through the CONNECT-IP tunnel without FEC.
	TunnelNoFEC = "tunnel-nofec"
	// TunnelFEC: through the tunnel with the adaptive controller under the
	// auto policy, the gateway's default.
	TunnelFEC = "tunnel-fec"
	// TunnelFixed: through the tunnel with the fixed-rate controller at
	// FixedSources:FixedRepairs and no tail protection: HIRT's
	// fixed-rate baseline, a constant code rate whatever the traffic.
	TunnelFixed = "tunnel-fixed"
)

// The fixed code rate of tunnel-fixed: one repair every ten source
// packets, 1/11 = 9.1% of the packets sent, within the 10% overhead the
// tunnel's target allows. Against the starlink profile's bursts (mean 3
// packets, 0.45% of packets) the sliding window lets consecutive repairs
// rebuild a burst together. Tail protection was kept on here because the
// tunnel's downlink stalled without it, with 1 MB responses: the
// server's connection took a run of large packets lost while small ones
// arrived for a path MTU black hole, fell back to 1200-byte datagrams
// for good, and dropped every full-size inner packet (seen with seed 3
// after 169 responses; with tail protection on it was not seen). Path
// MTU discovery now searches again after a black hole (the core's
// TestPMTUBlackHoleSearchesAgain: the same run then saw two such falls,
// each back at 1452 bytes a few round trips later, and every response
// arrived); and the repair the rate owes after a burst's last source
// goes when the pacer allows, not with the next ACK
// (TestFECOwedRepairWakesPacer).
const (
	FixedSources = 10
	FixedRepairs = 1
)

// AllStacks lists the stacks in the order the tables show them.
var AllStacks = []string{Direct, TunnelNoFEC, TunnelFEC, TunnelFixed}

// ParseStacks checks a comma-separated list of stack names.
func ParseStacks(list string) ([]string, error) { return parseStackList(list, AllStacks) }

// PlainSatquic is the goodput mode's reference row: a satquic download
// on loopback, no tunnel.
const PlainSatquic = "satquic"

// GoodputStacks lists the rows of the goodput mode in their order.
var GoodputStacks = []string{PlainSatquic, TunnelFEC, TunnelNoFEC}

// ParseGoodputStacks checks a comma-separated list of the goodput mode's
// stacks.
func ParseGoodputStacks(list string) ([]string, error) {
	return parseStackList(list, GoodputStacks)
}

func parseStackList(list string, known []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("unknown stack %q (known: %s)", s, strings.Join(known, ", "))
		}
		if seen[s] {
			return nil, fmt.Errorf("stack %s given twice", s)
		}
		seen[s] = true
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no stack in %q", list)
	}
	return out, nil
}

func isStack(s string) bool { return slices.Contains(AllStacks, s) }

// quicConfig is the QUIC configuration of a tunnel stack's two ends;
// maxOverhead caps the FEC stacks' repair bytes as a share of the source
// bytes sent (quic.FECConfig.MaxOverhead; zero: the tunnel's default,
// gateway.DefaultFECMaxOverhead).
func quicConfig(stack string, maxOverhead float64) *quic.Config {
	c := &quic.Config{}
	switch stack {
	case TunnelNoFEC:
	case TunnelFixed:
		c.FEC = &quic.FECConfig{
			Policy: quic.FECAuto, Controller: quic.FECFixed,
			FixedSources: FixedSources, FixedRepairs: FixedRepairs,
			MaxOverhead: maxOverhead, DisableTailProtection: true,
		}
	default:
		c.FEC = &quic.FECConfig{Policy: quic.FECAuto, MaxOverhead: maxOverhead}
	}
	return c
}
