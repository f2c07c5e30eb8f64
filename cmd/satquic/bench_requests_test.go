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

func benchRequests(args []string, stdout, stderr *bytes.Buffer) error {
	return runBench(append([]string{"requests"}, args...), stdout, stderr)
}

func TestBenchRequestsTableAndJSON(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "r.json")
	out, _, err := runCommand(t, benchRequests, "--runs", "1", "--requests", "20", "--parallel", "3", "--stacks", "satquic,satquic-nofec", "--json", jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"satquic-nofec", "p99.9", "fec overhead", "profile starlink", "in 3 flows"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Stack    string  `json:"stack"`
			Requests int     `json:"requests"`
			P99      float64 `json:"p99_ms"`
			Parallel int     `json:"parallel"`
			GapMs    float64 `json:"gap_ms"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 2 || doc.Results[0].Requests != 20 || doc.Results[0].P99 <= 0 ||
		doc.Results[0].Parallel != 3 || doc.Results[0].GapMs != 20 {
		t.Errorf("JSON results %+v", doc.Results)
	}
}

func TestBenchRequestsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--runs", "0"}, {"--size", "1MB,2MB"}, {"--gap", "-1s"}, {"--profile", "moon"}, {"--stacks", ","}, {"--parallel", "0"}} {
		var stdout, stderr bytes.Buffer
		if code := runMain(append([]string{"bench", "requests"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("bench requests %q: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := runMain([]string{"bench", "requests", "--runs", "1", "--requests", "1", "--stacks", "tcp-cubic"}, &stdout, &stderr); code == 0 {
		t.Error("a kernel TCP stack ran in virtual time")
	}
}
