package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/fec"
)

// fullRepair is the FEC_REPAIR data over sources of maxSymbol bytes.
func fullRepair(maxSymbol int) float64 { return float64(fec.RepairIDLen + 2 + maxSymbol) }

// The sender measures repair costs against the largest symbol it sends,
// not the largest it can receive: with 9000-byte receive buffers (the
// quic package's) a full 1452-byte repair must still cost a full repair.
func TestFECSendSymbolBound(t *testing.T) {
	ccfg, scfg := testConfigs(t, 7)
	for _, cfg := range []*Config{ccfg, scfg} {
		cfg.FEC = &FECConfig{}
		cfg.MaxReceiveDatagramSize = 9000
	}
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	for _, c := range []*Conn{p.client, p.server} {
		if c.fec == nil || c.fec.send == nil {
			t.Fatal("FEC not negotiated")
		}
		if got, want := c.fec.send.budget.full, fullRepair(DefaultMaxProbeDatagramSize); got != want {
			t.Errorf("sender's full repair %v bytes, want %v", got, want)
		}
	}
	// Without path MTU discovery, the starting size bounds it.
	ccfg, scfg = testConfigs(t, 8)
	for _, cfg := range []*Config{ccfg, scfg} {
		cfg.FEC = &FECConfig{}
		cfg.DisablePathMTUDiscovery = true
	}
	p = newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	if got, want := p.server.fec.send.budget.full, fullRepair(DefaultMaxDatagramSize); got != want {
		t.Errorf("without path MTU discovery: full repair %v bytes, want %v", got, want)
	}
}
