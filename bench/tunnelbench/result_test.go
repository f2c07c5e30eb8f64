//go:build linux

package tunnelbench

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/quic"
)

func TestParseStacks(t *testing.T) {
	got, err := ParseStacks(" direct, tunnel-fec ")
	if err != nil || len(got) != 2 || got[0] != Direct || got[1] != TunnelFEC {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", ",", "direct,direct", "tcp-cubic"} {
		if _, err := ParseStacks(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseGoodputStacks(t *testing.T) {
	got, err := ParseGoodputStacks("tunnel-nofec,satquic")
	if err != nil || len(got) != 2 || got[0] != TunnelNoFEC || got[1] != PlainSatquic {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "direct", "tunnel-fixed", "satquic,satquic"} {
		if _, err := ParseGoodputStacks(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestResultsAndExcess: the percentiles of a batch, and the p99 excess of
// a lossy result over the lossless one of the same stack and size only.
func TestResultsAndExcess(t *testing.T) {
	times := make([]float64, 1000)
	for i := range times {
		times[i] = float64(i+1) / 1000 // 1 ms .. 1 s
	}
	rs := []Result{
		newResult(TunnelFEC, LinkLossy, 10_000, batch{times: times}),
		newResult(TunnelFEC, LinkLossless, 10_000, batch{times: []float64{0.1, 0.2}}),
		newResult(TunnelNoFEC, LinkLossy, 10_000, batch{times: []float64{0.3}}),
	}
	r := rs[0]
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(r.P50S, 0.5005) || !near(r.P99S, 0.99001) || !near(r.P999S, 0.999001) || r.MaxS != 1 {
		t.Errorf("percentiles %v %v %v %v", r.P50S, r.P99S, r.P999S, r.MaxS)
	}
	if !near(r.P25S, 0.25075) || !near(r.P75S, 0.75025) {
		t.Errorf("quartiles %v %v, want 0.25075 0.75025", r.P25S, r.P75S)
	}
	setExcess(rs)
	if rs[0].ExcessP99S == nil || !near(*rs[0].ExcessP99S, 0.99001-0.199) {
		t.Errorf("excess %v", rs[0].ExcessP99S)
	}
	if rs[1].ExcessP99S != nil || rs[2].ExcessP99S != nil {
		t.Errorf("excess where there is no reference: %v %v", rs[1].ExcessP99S, rs[2].ExcessP99S)
	}
	var text bytes.Buffer
	if err := Table(rs).WriteText(&text); err != nil || !strings.Contains(text.String(), "tunnel-nofec") {
		t.Errorf("table %q, %v", text.String(), err)
	}
	// The keys the issue asks for.
	b, err := json.Marshal(Document{Results: rs[:1]})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"stack", "size_bytes", "requests", "p25_s", "p50_s", "p75_s", "p99_s", "p999_s", "overhead", "fec_overhead"} {
		if _, ok := doc.Results[0][k]; !ok {
			t.Errorf("no %q in %s", k, b)
		}
	}
}

// TestFECOverhead: the repair bytes of both ends between two readings of
// the counters, per byte of response body, in the table and the JSON.
func TestFECOverhead(t *testing.T) {
	before := tunnelCounts{RepairBytesSent: 100, ServerRepairBytesSent: 1000, SourceBytesSent: 5, ServerSourceBytesSent: 50}
	after := tunnelCounts{RepairBytesSent: 600, ServerRepairBytesSent: 8500, SourceBytesSent: 9, ServerSourceBytesSent: 90}
	d := after.minus(before)
	if d.RepairBytesSent != 500 || d.ServerRepairBytesSent != 7500 || d.SourceBytesSent != 4 || d.ServerSourceBytesSent != 40 {
		t.Fatalf("difference %+v", d)
	}
	if got := d.fecOverhead(100_000); got != 0.08 {
		t.Errorf("fec overhead %v, want 0.08", got)
	}
	if got := d.fecOverhead(0); got != 0 {
		t.Errorf("fec overhead of no payload %v", got)
	}
	r := newResult(TunnelFEC, LinkLossy, 10_000, batch{times: []float64{0.1}})
	r.FEC, r.FECOverhead = d, d.fecOverhead(100_000)
	direct := newResult(Direct, LinkLossy, 10_000, batch{times: []float64{0.1}})
	var text bytes.Buffer
	if err := Table([]Result{r, direct}).WriteText(&text); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if !strings.Contains(text.String(), "fec overhead") || !strings.Contains(lines[3], " 8.0% ") {
		t.Errorf("table without the FEC overhead:\n%s", text.String())
	}
	b, err := json.Marshal(r)
	if err != nil || !strings.Contains(string(b), `"fec_overhead":0.08`) {
		t.Errorf("JSON %s, %v", b, err)
	}
}

// TestStackConfigs: tunnel-fec runs the adaptive controller with tail
// protection, tunnel-fixed the fixed rate without it, both at the
// tunnel's default cap unless one is given; tunnel-nofec has no FEC.
func TestStackConfigs(t *testing.T) {
	if c := quicConfig(TunnelNoFEC, 0); c.FEC != nil {
		t.Errorf("tunnel-nofec FEC %+v", c.FEC)
	}
	if f := quicConfig(TunnelFEC, 0).FEC; f == nil || f.Controller != "" || f.DisableTailProtection || f.MaxOverhead != 0 {
		t.Errorf("tunnel-fec FEC %+v", f)
	}
	f := quicConfig(TunnelFixed, 0.2).FEC
	if f == nil || f.Controller != quic.FECFixed || !f.DisableTailProtection || f.FixedSources != FixedSources || f.MaxOverhead != 0.2 {
		t.Errorf("tunnel-fixed FEC %+v", f)
	}
}

// TestCountsMinusEveryCounter: minus subtracts every counter of
// tunnelCounts, so that a counter added later is not reported as its
// total since the tunnel started.
func TestCountsMinusEveryCounter(t *testing.T) {
	var a, b tunnelCounts
	va, vb := reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem()
	for i := range va.NumField() {
		if va.Field(i).Kind() == reflect.Uint64 {
			va.Field(i).SetUint(uint64(3 * (i + 1)))
			vb.Field(i).SetUint(uint64(i + 1))
		}
	}
	d := reflect.ValueOf(a.minus(b))
	for i := range d.NumField() {
		if d.Field(i).Kind() == reflect.Uint64 && d.Field(i).Uint() != uint64(2*(i+1)) {
			t.Errorf("%s: %d - %d gave %d", d.Type().Field(i).Name, va.Field(i).Uint(), vb.Field(i).Uint(), d.Field(i).Uint())
		}
	}
}

// TestCountsMinusKeepsRTT: between two readings the overdue sources are
// counted as a difference, while the RTT estimate and the ACK delay asked
// for are the later reading's, not differences.
func TestCountsMinusKeepsRTT(t *testing.T) {
	before := tunnelCounts{OverdueSources: 10, SmoothedRTT: time.Millisecond, RTTVariance: time.Millisecond}
	after := tunnelCounts{OverdueSources: 25, SmoothedRTT: 3 * time.Millisecond, RTTVariance: 2 * time.Millisecond, PeerMaxAckDelay: time.Millisecond}
	d := after.minus(before)
	if d.OverdueSources != 15 || d.SmoothedRTT != 3*time.Millisecond || d.RTTVariance != 2*time.Millisecond || d.PeerMaxAckDelay != time.Millisecond {
		t.Errorf("difference %+v", d)
	}
}
