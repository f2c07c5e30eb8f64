package linkflags

import (
	"math"
	"testing"
)

// FuzzParseRate: a rate flag is an error or a finite, non-negative bit/s.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"50M", "2.5Gbit/s", "800kbps", "1e6", "-1M", "Inf", "NaN", "M", "bit/s", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseRate(s)
		if err != nil {
			return
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("ParseRate(%q) = %v", s, v)
		}
	})
}
