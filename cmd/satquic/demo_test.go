package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func demo(args []string, stdout, stderr *bytes.Buffer) error { return runDemo(args, stdout, stderr) }

func TestDemoPrintsTablesAndExplanation(t *testing.T) {
	pngPath := filepath.Join(t.TempDir(), "demo.png")
	out, _, err := runCommand(t, demo, "--packets", "2000", "--warmup", "500", "--ge-points", "5", "--plot", pngPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Starlink fit", "in-flight Wi-Fi", "5-point Gilbert-Elliott", "adaptive", "M:1-20:20", `"overhead" is repairs per source packet`, "2000 packets per run"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	checkPNG(t, pngPath)
}

func TestDemoJSONAndBadFlags(t *testing.T) {
	out, _, err := runCommand(t, demo, "--packets", "1000", "--warmup", "0", "--ge-points", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var sweeps []sweepOutput
	if err := json.Unmarshal([]byte(out), &sweeps); err != nil {
		t.Fatal(err)
	}
	if len(sweeps) != 2 || len(sweeps[0].Points) != len(demoConditions) || len(sweeps[1].Points) != 2 {
		t.Errorf("demo JSON: %d sweeps", len(sweeps))
	}
	for _, args := range [][]string{{"--packets", "0"}, {"--ge-points", "-1"}, {"--warmup", "x"}, {"--plot"}} {
		var stdout, stderr bytes.Buffer
		if code := runMain(append([]string{"demo"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("demo %q: exit %d, want 2 (stderr %q)", args, code, stderr.String())
		}
	}
}
