package core

import (
	"testing"
	"time"
)

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
		if got := c.fec.send.maxSymbol; got != DefaultMaxProbeDatagramSize {
			t.Errorf("sender's largest symbol %d, want %d", got, DefaultMaxProbeDatagramSize)
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
	if got := p.server.fec.send.maxSymbol; got != DefaultMaxDatagramSize {
		t.Errorf("without path MTU discovery: largest symbol %d, want %d", got, DefaultMaxDatagramSize)
	}
}
