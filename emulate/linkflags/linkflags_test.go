package linkflags

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

func parse(t *testing.T, args ...string) (*Overrides, error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := Register(fs)
	return o, fs.Parse(args)
}

func TestOverridesApplyInOrder(t *testing.T) {
	o, err := parse(t, "--rate-down", "50M", "--rate-up", "2.5Mbit/s", "--delay", "10ms", "--delay-up", "20ms",
		"--loss-down", "1%", "--queue", "64K", "--queue-packets", "25", "--mtu", "1500", "--outages=false")
	if err != nil {
		t.Fatal(err)
	}
	p, err := netsim.LookupProfile("starlink")
	if err != nil {
		t.Fatal(err)
	}
	p, err = o.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	d, u := p.Down, p.Up
	if d.RateBps != 50e6 || u.RateBps != 2.5e6 {
		t.Errorf("rates %v/%v", d.RateBps, u.RateBps)
	}
	if d.Delay != 10*time.Millisecond || u.Delay != 20*time.Millisecond || d.DelaySteps != nil {
		t.Errorf("delays %v/%v, steps %v", d.Delay, u.Delay, d.DelaySteps)
	}
	if d.Loss != "uniform:1%" || u.Loss != "ge:0.00151,0.3333333333333333" {
		t.Errorf("loss %q/%q", d.Loss, u.Loss)
	}
	if d.QueueBytes != 64<<10 || u.QueuePackets != 25 || u.MTU != 1500 || d.Outages != nil || u.Outages != nil {
		t.Errorf("queue %d, packets %d, mtu %d, outages %v", d.QueueBytes, u.QueuePackets, u.MTU, d.Outages)
	}
}

func TestBadValuesAreFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--rate-up", "-5M"}, {"--rate", "fast"}, {"--loss", "1.5"}, {"--loss-down", "ge:2,1"},
		{"--delay", "-1ms"}, {"--queue", "-3"}, {"--duplicate", "110%"}, {"--mtu", "x"}, {"--trace-down", "/nonexistent"},
	} {
		if _, err := parse(t, args...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestRates(t *testing.T) {
	for s, want := range map[string]float64{"50M": 50e6, "2.5Gbit/s": 2.5e9, "800kbps": 800e3, "1e6": 1e6, "0": 0, "10 Mbit": 10e6} {
		got, err := ParseRate(s)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for bps, want := range map[float64]string{0: "unlimited", 250e6: "250M", 1e9: "1G", 1.5e6: "1.5M", 3e3: "3k"} {
		if got := FormatRate(bps); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", bps, got, want)
		}
	}
}

func TestProfileTableListsEveryProfile(t *testing.T) {
	var b strings.Builder
	if err := WriteProfiles(&b, netsim.Profiles()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != len(netsim.Profiles())+1 {
		t.Fatalf("%d lines for %d profiles:\n%s", len(lines), len(netsim.Profiles()), b.String())
	}
	for i, p := range netsim.Profiles() {
		if !strings.HasPrefix(lines[i+1], p.Name+" ") {
			t.Errorf("line %d is %q, want profile %s", i+1, lines[i+1], p.Name)
		}
	}
	if s := Summary(netsim.LinkConfig{RateBps: 20e6, Delay: 300 * time.Millisecond, Jitter: time.Millisecond, Loss: "uniform:0.01"}); s != "20M, 300ms +- 1ms, uniform:0.01" {
		t.Errorf("summary %q", s)
	}
}
