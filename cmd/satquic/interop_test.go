//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInteropBadInputIsOneLineAndStatusTwo(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"interop", "--cases", "handshake,nope"}, `unknown case "nope"`},
		{[]string{"interop", "--peers", "msquic"}, `unknown implementation "msquic"`},
		{[]string{"interop", "stray"}, "unexpected argument"},
	} {
		var stdout, stderr bytes.Buffer
		code := runMain(c.args, &stdout, &stderr)
		lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
		if code != 2 || len(lines) != 1 || !strings.Contains(lines[0], c.want) {
			t.Errorf("%v: status %d, stderr %q; want status 2 and one line about %q", c.args[1:], code, stderr.String(), c.want)
		}
	}
}

func TestInteropListsCases(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"interop", "--list"}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	for _, name := range []string{"handshake", "amplificationlimit", "v2", "connectionmigration"} {
		if !strings.Contains(stdout.String(), name) {
			t.Errorf("--list lacks %s:\n%s", name, stdout.String())
		}
	}
}

// TestInteropSatquicAlone runs two fast cases between satquic and itself,
// which needs no peer: the matrix on stdout, progress on stderr, and the
// JSON file.
func TestInteropSatquicAlone(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.json")
	var stdout, stderr bytes.Buffer
	code := runMain([]string{"interop", "--peers", "satquic", "--cases", "handshake,retry", "--json", out, "--seed", "3"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("status %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "[2/2] retry satquic -> satquic ... pass") {
		t.Errorf("no progress line on stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "retry      pass") || !strings.Contains(stdout.String(), "OK:") {
		t.Errorf("matrix:\n%s", stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Seed    uint64 `json:"seed"`
		OK      bool   `json:"ok"`
		Results []struct {
			Case, Client, Server, Status string
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.Seed != 3 || !m.OK || len(m.Results) != 2 || m.Results[1].Case != "retry" || m.Results[1].Status != "pass" {
		t.Errorf("JSON %+v", m)
	}
}
