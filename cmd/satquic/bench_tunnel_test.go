//go:build linux

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/satquic/satquic/bench/tunnelbench"
)

func TestBenchTunnelBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--requests", "0"}, {"--parallel", "0"}, {"--gap", "-1s"}, {"--profile", "moon"},
		{"--stacks", "direct,quic"}, {"--stacks", ","}, {"--sizes", "ten"}, {"--seed", "x"},
		{"--fec-max-overhead", "1"}, {"--mode", "iperf"}, {"--warm-up", "-1MB"}, {"--warm-up", "x"}, {"--inner-cc", "nosuch"},
		{"--mode", "goodput", "--flows", "0"}, {"--mode", "goodput", "--loss", "100"},
		{"--mode", "goodput", "--stacks", "direct"}, {"--mode", "goodput", "--stacks", "tunnel-fec,tunnel-fec"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(append([]string{"bench", "tunnel"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("bench tunnel %q: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		}
	}
}

func TestBenchTunnelClientBadArgs(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runMain([]string{"bench", "tunnel-client", "--stack", "direct"}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "--url") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

func TestBenchListsTunnel(t *testing.T) {
	var stdout, stderr bytes.Buffer
	runMain([]string{"bench", "--help"}, &stdout, &stderr)
	if !strings.Contains(stdout.String()+stderr.String(), "  tunnel ") {
		t.Errorf("bench --help does not name the tunnel experiment:\n%s%s", stdout.String(), stderr.String())
	}
}

func TestParseWarmUp(t *testing.T) {
	for in, want := range map[string]int64{"0": tunnelbench.NoWarmUp, "16MB": 16_000_000, "1kB": 1000} {
		if got, err := parseWarmUp(in); err != nil || got != want {
			t.Errorf("parseWarmUp(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}
