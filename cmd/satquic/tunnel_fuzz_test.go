package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// tunnelConfigSeeds are config files good and bad.
var tunnelConfigSeeds = []string{
	`{"listen": ":4433", "pool": ["10.77.0.0/24", "fd77::/64"], "route": "0.0.0.0/0", "token": "t", "stats": "10s", "mtu": 1400, "no-fec": false}`,
	`{"token": "x", "pool": "10.1.0.0/16,fd00::/120"}`,
	`{"tokn": 1}`,
	`{"token": "x", "mtu": [1300, 1400]}`,
	`{"token": null}`,
	`[]`,
	`{"token": "x", "fec-max-overhead": 0.1, "fec-policy": "hide"}`,
}

// FuzzTunnelConfig feeds the server's flag parsing any config file: it
// gives options or a usage error, never a panic.
func FuzzTunnelConfig(f *testing.F) {
	for _, s := range tunnelConfigSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "config.json")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		o, err := tunnelServerFlags([]string{"--config", p}, io.Discard)
		if err == nil && (o.token == "" && o.clientCA == "" || len(o.pool) == 0) {
			t.Fatalf("accepted options without credentials or pool: %+v", o)
		}
	})
}

// TestTunnelConfigTruncated: every prefix of a good config file is parsed
// without a panic, and those that are not whole JSON are refused.
func TestTunnelConfigTruncated(t *testing.T) {
	whole := []byte(tunnelConfigSeeds[0])
	p := filepath.Join(t.TempDir(), "config.json")
	for n := range len(whole) {
		if err := os.WriteFile(p, whole[:n], 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := tunnelServerFlags([]string{"--config", p}, io.Discard); err == nil {
			t.Errorf("a config cut to %d bytes was accepted", n)
		}
	}
	if err := os.WriteFile(p, whole, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := tunnelServerFlags([]string{"--config", p}, io.Discard); err != nil {
		t.Errorf("the whole config: %v", err)
	}
}
