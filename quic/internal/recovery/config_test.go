package recovery

import "testing"

// WithDefaults fills in only the zero fields: what a caller set stays,
// flags included.
func TestConfigWithDefaults(t *testing.T) {
	c := Config{Algorithm: NewReno, MaxWindow: 1 << 20, InitialRTT: 600 * ms}
	c.Pacing.Disabled = true
	c.LongRTT.NoJump = true
	c.HyStart.MaxRTTThresh = 20 * ms
	d := c.WithDefaults()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Algorithm, want.MaxWindow, want.InitialRTT = NewReno, 1<<20, 600*ms
	want.Pacing.Disabled, want.LongRTT.NoJump, want.HyStart.MaxRTTThresh = true, true, 20*ms
	if d != want {
		t.Errorf("WithDefaults:\n%+v\nwant\n%+v", d, want)
	}
	if d.WithDefaults() != d {
		t.Error("WithDefaults of a filled Config changed it")
	}
}

// TestValidateAllocatesNothing: every new connection validates its
// recovery configuration, twice (the core's configuration and the
// Sender's); a valid one costs no heap.
func TestValidateAllocatesNothing(t *testing.T) {
	for _, alg := range []Algorithm{CUBIC, BBR} {
		cfg := Config{Algorithm: alg}.WithDefaults()
		if allocs := testing.AllocsPerRun(100, func() {
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
		}); allocs != 0 {
			t.Errorf("%v: Validate made %v allocations, want 0", alg, allocs)
		}
	}
}
