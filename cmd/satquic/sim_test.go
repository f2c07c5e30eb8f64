package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runCommand(t *testing.T, run func([]string, *bytes.Buffer, *bytes.Buffer) error, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func sim(args []string, stdout, stderr *bytes.Buffer) error { return runSim(args, stdout, stderr) }

func TestSimJSONContract(t *testing.T) {
	out, _, err := runCommand(t, sim, "--scheme", "rlc-adaptive", "--loss", "ge:0.005,0.3", "--packets", "5000", "--seed", "3", "--rtt-packets", "20", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value in the output:\n%s", out)
	}
	for _, key := range []string{"overhead", "recovered_ratio", "residual_loss", "recovery_delay_p50", "recovery_delay_p99", "decode_ns_per_packet"} {
		v, ok := obj[key].(float64)
		if !ok {
			t.Errorf("%s missing or not a number: %v", key, obj[key])
			continue
		}
		if strings.HasSuffix(key, "_ratio") || key == "residual_loss" || key == "overhead" {
			if v < 0 || v > 1 {
				t.Errorf("%s = %v, want a fraction", key, v)
			}
		}
	}
	if obj["scheme"] != "rlc-adaptive" || obj["loss"] != "ge:0.005,0.3" || obj["packets"] != 5000.0 || obj["seed"] != 3.0 || obj["rtt_packets"] != 20.0 {
		t.Errorf("run description: scheme %v loss %v packets %v seed %v rtt %v", obj["scheme"], obj["loss"], obj["packets"], obj["seed"], obj["rtt_packets"])
	}
	if obj["lost"].(float64) == 0 || obj["mismatches"] != 0.0 {
		t.Errorf("lost %v, mismatches %v", obj["lost"], obj["mismatches"])
	}
	// The same seed gives the same numbers.
	again, _, err := runCommand(t, sim, "--scheme", "rlc-adaptive", "--loss", "ge:0.005,0.3", "--packets", "5000", "--seed", "3", "--rtt-packets", "20", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var obj2 map[string]any
	if err := json.Unmarshal([]byte(again), &obj2); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"overhead", "recovered_ratio", "recovery_delay_p99", "repairs_sent"} {
		if obj[key] != obj2[key] {
			t.Errorf("%s: %v then %v with the same seed", key, obj[key], obj2[key])
		}
	}
}

func TestSimTableAndFiles(t *testing.T) {
	dir := t.TempDir()
	csvPath, pngPath := filepath.Join(dir, "runs.csv"), filepath.Join(dir, "runs.png")
	out, _, err := runCommand(t, sim, "--scheme", "rlc-hirt,maelstrom", "--maelstrom", "1-20-40:8", "--loss", "uniform:0.01", "--packets", "3000", "--csv", csvPath, "--plot", pngPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"overhead", "recovered", "HIRT b=3 w=200", "M:1-20-40:8", "37."} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	checkCSV(t, csvPath, 3)
	checkPNG(t, pngPath)
}

func checkCSV(t *testing.T, path string, rows int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != rows || recs[0][0] != "sweep" {
		t.Errorf("CSV has %d rows (want %d), header %v", len(recs), rows, recs[0])
	}
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if img.Bounds().Dx() < 500 {
		t.Errorf("%s is only %v", path, img.Bounds())
	}
}

func TestSimSweepJSON(t *testing.T) {
	out, _, err := runCommand(t, sim, "--sweep", "starlink", "--scheme", "all", "--packets", "2000", "--warmup", "0", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Sweeps []sweepOutput `json:"sweeps"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Sweeps) != 1 || got.Sweeps[0].Sweep != "starlink" || len(got.Sweeps[0].Summary) != 6 || len(got.Sweeps[0].Points[0].Results) != 6 {
		t.Fatalf("sweep output %+v", got)
	}
	if got.Sweeps[0].Packets != 2000 || got.Sweeps[0].Warmup != 0 {
		t.Errorf("packets %d warm-up %d, want 2000 and 0", got.Sweeps[0].Packets, got.Sweeps[0].Warmup)
	}
}

func TestSimSweepTables(t *testing.T) {
	out, _, err := runCommand(t, sim, "--sweep", "all", "--scheme", "rlc-adaptive,xor", "--packets", "1000", "--warmup", "0", "--ge-points", "4")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Uniform loss (figure 10)", "uniform 5.0%", "Gilbert-Elliott design (figure 11a), 4 points", "Starlink fit (figure 11b)", "XOR k=10"} {
		if !strings.Contains(out, want) {
			t.Errorf("sweep tables lack %q:\n%s", want, out)
		}
	}
}

func TestSimBadFlags(t *testing.T) {
	bad := [][]string{
		{"--packets", "many"},
		{"--scheme", "fountain"},
		{"--loss", "uniform:7"},
		{"--loss", "gilbert"},
		{"--sweep", "figure12"},
		{"--fixed", "20"},
		{"--rs", "a:b"},
		{"--maelstrom", "1-20"},
		{"--hirt-b", "-1", "--scheme", "rlc-hirt"},
		{"--payload", "100:10"},
		{"--rtt-packets", "-4"},
		{"--window", "9999", "--scheme", "rlc-fixed"},
		{"extra"},
	}
	for _, args := range bad {
		var stdout, stderr bytes.Buffer
		code := runMain(append([]string{"sim"}, args...), &stdout, &stderr)
		lines := strings.Count(strings.TrimSpace(stderr.String()), "\n") + 1
		if code != 2 || lines != 1 || !strings.HasPrefix(stderr.String(), "satquic sim: ") {
			t.Errorf("sim %q: exit %d, stderr %q; want exit 2 and one line", args, code, stderr.String())
		}
	}
	_, stderr, err := runCommand(t, sim, "--help")
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(stderr, "Usage: satquic sim") || !strings.Contains(stderr, "-rtt-packets") {
		t.Errorf("--help: error %v, stderr %q", err, stderr)
	}
}
