package loss

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sequence returns the first n decisions of a model as a 0/1 string.
func sequence(m Model, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '0'
		if m.Drop() {
			b[i] = '1'
		}
	}
	return string(b)
}

func mustParse(t *testing.T, spec string, seed uint64) Model {
	t.Helper()
	m, err := Parse(spec, seed)
	if err != nil {
		t.Fatalf("Parse(%q): %v", spec, err)
	}
	return m
}

func TestDeterminism(t *testing.T) {
	for _, spec := range []string{"uniform:0.1", "ge:0.05,0.3", "ge:0.03,0.4,0.95,0.01", "burst:0.3,3"} {
		a := sequence(mustParse(t, spec, 99), 5000)
		b := sequence(mustParse(t, spec, 99), 5000)
		c := sequence(mustParse(t, spec, 100), 5000)
		if a != b {
			t.Errorf("%s: same seed, different sequences", spec)
		}
		if a == c {
			t.Errorf("%s: seeds 99 and 100 give the same sequence", spec)
		}
	}
}

func TestCanonicalString(t *testing.T) {
	for spec, want := range map[string]string{
		"":                     "none",
		"none":                 "none",
		" uniform:1% ":         "uniform:0.01",
		"uniform:0.001":        "uniform:0.001",
		"ge:0.00151,0.3":       "ge:0.00151,0.3",
		"ge:0.01,0.3,1,0":      "ge:0.01,0.3",
		"ge:0.01,0.3,0.9":      "ge:0.01,0.3,0.9",
		"ge:3%,40%,95%,1%":     "ge:0.03,0.4,0.95,0.01",
		"ge:0.01,0.3,1,0.02":   "ge:0.01,0.3,1,0.02",
		"burst:30%,3":          "burst:0.3,3",
		"drop:9,7-8,1,5,5,2-3": "drop:1-3,5,7-9",
		"drop: 4":              "drop:4",
		"pattern:01 10\n0":     "pattern:01100",
		"drop:18446744073709551615,0-18446744073709551614": "drop:0-18446744073709551615",
	} {
		m := mustParse(t, spec, 1)
		if got := m.String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", spec, got, want)
		}
		again := mustParse(t, m.String(), 1)
		if again.String() != want {
			t.Errorf("re-parsing %q gives %q", want, again.String())
		}
	}
}

func TestDropList(t *testing.T) {
	m := mustParse(t, "drop:1,5,7-9", 0)
	if got, want := sequence(m, 14), "01000101110000"; got != want {
		t.Errorf("drop:1,5,7-9 = %s, want %s", got, want)
	}
	if m.Mean() != 0 {
		t.Errorf("Mean = %v, want 0", m.Mean())
	}
}

func TestTraceFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "loss.trace")
	if err := os.WriteFile(path, []byte("0 0 1\n1 0\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := mustParse(t, "trace:"+path, 0)
	if got, want := sequence(m, 12), "001100011000"; got != want {
		t.Errorf("trace = %s, want %s (wrapping)", got, want)
	}
	if m.Mean() != 0.4 {
		t.Errorf("Mean = %v, want 0.4", m.Mean())
	}
	if m.String() != "trace:"+path {
		t.Errorf("String = %q", m.String())
	}
}

func TestParseErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"none:1":                        "none takes no parameters",
		"uniform":                       "uniform needs parameters",
		"uniform:":                      `loss probability "" is not a number`,
		"uniform:1.5":                   "loss probability 1.5 not in [0,1]",
		"uniform:-0.1":                  "loss probability -0.1 not in [0,1]",
		"uniform:NaN":                   "loss probability NaN not in [0,1]",
		"uniform:150%":                  "loss probability 1.5 not in [0,1]",
		"uniform:x":                     `loss probability "x" is not a number`,
		"ge:0.1":                        "ge takes 2 to 4 parameters, got 1",
		"ge:0.1,0.2,0.3,0.4,5":          "ge takes 2 to 4 parameters, got 5",
		"ge:2,0.2":                      "p (good->bad) 2 not in [0,1]",
		"ge:0.1,-1":                     "r (bad->good) -1 not in [0,1]",
		"ge:0.1,0.2,1.1":                "loss in bad state 1.1 not in [0,1]",
		"ge:0.1,0.2,1,Inf":              "loss in good state +Inf not in [0,1]",
		"burst:0.1":                     "burst takes 2 parameters, got 1",
		"burst:0.1,0":                   "maximum burst 0 must be at least 1",
		"burst:0.1,two":                 `maximum burst "two" is not an integer`,
		"burst:2,3":                     "loss probability 2 not in [0,1]",
		"drop:":                         "empty packet index",
		"drop:1,,2":                     "empty packet index",
		"drop:-1":                       `packet index "" is not a non-negative integer`,
		"drop:5-2":                      "drop range 5-2 is reversed",
		"drop:1-x":                      `packet index "x" is not a non-negative integer`,
		"drop:99999999999999999999":     "is not a non-negative integer",
		"trace:":                        "trace needs a file name",
		"trace:/nonexistent/loss.trace": "reading trace",
		"pattern:0 1 2":                 `character '2' at byte 4 is not 0, 1 or space`,
		"pattern: \n":                   "trace holds no 0 or 1",
		"markov:0.1":                    `unknown loss model "markov"`,
	} {
		_, err := Parse(spec, 1)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want error %q", spec, want)
			continue
		}
		if !errors.Is(err, ErrSpec) {
			t.Errorf("Parse(%q) error %v does not wrap ErrSpec", spec, err)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error %q, want it to contain %q", spec, err, want)
		}
	}
}

func TestConstructorErrors(t *testing.T) {
	if _, err := NewUniform(1.01, 0); err == nil {
		t.Error("NewUniform(1.01) succeeded")
	}
	if _, err := NewGilbertElliott(GEParams{P: 0.1, R: 0.1, LossBad: -0.5}, 0); err == nil {
		t.Error("NewGilbertElliott with LossBad -0.5 succeeded")
	}
	if _, err := NewBurst(0.1, -3, 0); err == nil {
		t.Error("NewBurst with max -3 succeeded")
	}
	if _, err := NewDropList([]Interval{{First: 4, Last: 2}}); err == nil {
		t.Error("NewDropList with a reversed range succeeded")
	}
	if _, err := NewTrace(""); err == nil {
		t.Error("NewTrace(\"\") succeeded")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"none", "uniform:0.01", "uniform:1%", "ge:0.01,0.3", "ge:0.03,0.4,0.95,0.01",
		"burst:0.3,3", "drop:1,5,7-9", "pattern:0101", "drop:0-18446744073709551615", "ge:1e-300,5e-324"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if strings.HasPrefix(strings.TrimSpace(spec), "trace") {
			t.Skip("trace specs read files")
		}
		m, err := Parse(spec, 7)
		if err != nil {
			if !errors.Is(err, ErrSpec) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrSpec", spec, err)
			}
			return
		}
		if mean := m.Mean(); !(mean >= 0 && mean <= 1) {
			t.Fatalf("Parse(%q).Mean() = %v", spec, mean)
		}
		again, err := Parse(m.String(), 7)
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", m.String(), spec, err)
		}
		if again.String() != m.String() {
			t.Fatalf("canonical form not stable: %q -> %q", m.String(), again.String())
		}
		if a, b := sequence(m, 64), sequence(again, 64); a != b {
			t.Fatalf("%q and its canonical form %q behave differently: %s vs %s", spec, m.String(), a, b)
		}
	})
}

// TestGilbertElliottDecidesBeforeTransition pins netem's order with chains
// whose transitions are certain: the first packet sees the good state.
func TestGilbertElliottDecidesBeforeTransition(t *testing.T) {
	for spec, want := range map[string]string{
		"ge:1,1":         "01010101",
		"ge:1,0":         "01111111",
		"ge:0,1,1,1":     "11111111",
		"ge:1,1,0.0,1.0": "10101010",
	} {
		if got := sequence(mustParse(t, spec, 3), 8); got != want {
			t.Errorf("%s = %s, want %s", spec, got, want)
		}
	}
}
