package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
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

// tokenFileSeeds are token files good and bad.
var tokenFileSeeds = []string{
	"# one token per client\nalice-Zx81\n\nbob-Qq02\r\n",
	"only\n",
	"two words\n",
	"\n\n# nothing\n",
	"\ttabbed\t\n",
}

// FuzzTokenFile feeds the server's token file parser anything: it gives
// tokens without white space, at least one, or a usage error, never a
// panic.
func FuzzTokenFile(f *testing.F) {
	for _, s := range tokenFileSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "tokens")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		toks, err := readTokenFile(p)
		if err != nil {
			return
		}
		if len(toks) == 0 {
			t.Fatal("no token and no error")
		}
		for _, tok := range toks {
			if tok == "" || strings.ContainsFunc(tok, unicode.IsSpace) || strings.HasPrefix(tok, "#") {
				t.Fatalf("token %q from %q", tok, data)
			}
		}
	})
}

// TestTokenFileTruncated: every prefix of a good token file gives a
// prefix of its tokens (the last one perhaps cut short), or, before the
// first token, an error.
func TestTokenFileTruncated(t *testing.T) {
	whole := []byte(tokenFileSeeds[0])
	want, err := readTokenFile(writeTemp(t, whole))
	if err != nil || strings.Join(want, ",") != "alice-Zx81,bob-Qq02" {
		t.Fatalf("the whole file: %q, %v", want, err)
	}
	for n := range len(whole) {
		toks, err := readTokenFile(writeTemp(t, whole[:n]))
		if err != nil {
			if n > strings.Index(string(whole), "alice")+1 {
				t.Errorf("cut to %d bytes: %v", n, err)
			}
			continue
		}
		for i, tok := range toks {
			if i >= len(want) || !strings.HasPrefix(want[i], tok) || (i < len(toks)-1 && tok != want[i]) {
				t.Errorf("cut to %d bytes: tokens %q, want a prefix of %q", n, toks, want)
				break
			}
		}
	}
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
