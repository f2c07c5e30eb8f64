package quic

import (
	"testing"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// An FECConfig without a policy takes auto; each policy name maps to loss
// recovery's.
func TestFECPolicyMapping(t *testing.T) {
	for policy, want := range map[string]recovery.FECPolicy{
		"":        recovery.FECAuto,
		FECAuto:   recovery.FECAuto,
		FECSignal: recovery.FECSignal,
		FECHide:   recovery.FECHide,
	} {
		_, got, err := (&FECConfig{Policy: policy}).coreFEC()
		if err != nil || got != want {
			t.Errorf("policy %q: %v, %v; want %v", policy, got, err, want)
		}
	}
}

// The public FEC counters come from the core's and loss recovery's.
func TestFECStatsMapping(t *testing.T) {
	var s core.Stats
	s.FEC.Enabled, s.FEC.SourcesSent, s.FEC.RepairsSent = true, 100, 7
	s.Recovery.PacketsRecovered, s.Recovery.RecoveredAsCongestion = 5, 2
	f := fecStats(&s)
	if !f.Enabled || f.SourcesSent != 100 || f.RepairsSent != 7 || f.PacketsRecoveredByPeer != 5 || f.RecoveredByPeerAsCongestion != 2 {
		t.Errorf("%+v", f)
	}
}
