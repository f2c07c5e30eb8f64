package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func demo(args []string, stdout, stderr *bytes.Buffer) error { return runDemo(args, stdout, stderr) }

func TestDemoComparesFECWithPlainQUIC(t *testing.T) {
	dir := t.TempDir()
	pngPath, jsonPath := filepath.Join(dir, "demo.png"), filepath.Join(dir, "demo.json")
	out, _, err := runCommand(t, demo, "--runs", "1", "--plot", pngPath, "--json", jsonPath, "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"satquic-nofec", "satquic-plain", "20MB", "limit", "seed-ifc", `policy, "auto"`, "Plot: " + pngPath} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	checkPNG(t, pngPath)
	raw, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Stack     string  `json:"stack"`
			SizeBytes int64   `json:"size_bytes"`
			MedianS   float64 `json:"median_s"`
			LimitS    float64 `json:"limit_s"`
		} `json:"results"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 9 {
		t.Fatalf("%d results, want 3 stacks x 3 sizes", len(doc.Results))
	}
	at20MB := map[string]float64{}
	for _, r := range doc.Results {
		if r.MedianS <= r.LimitS {
			t.Errorf("%s %d B in %v s, below the physical limit %v s", r.Stack, r.SizeBytes, r.MedianS, r.LimitS)
		}
		if r.SizeBytes == 20e6 {
			at20MB[r.Stack] = r.MedianS
		}
	}
	// The demo's point: satquic's defaults take 20 MB through the lossy
	// link in well under half the time standard QUIC takes.
	if def, plain := at20MB["satquic"], at20MB["satquic-plain"]; def == 0 || 2*def > plain {
		t.Errorf("20 MB: satquic %v s, satquic-plain %v s", def, plain)
	}
}

func TestDemoBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--runs", "0"}, {"--profile", "mars"}, {"--plot", "x.jpg"}, {"--seed", "x"}} {
		var stdout, stderr bytes.Buffer
		if code := runMain(append([]string{"demo"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("demo %q: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		}
	}
}
