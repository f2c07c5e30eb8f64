package linkflags

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseRate reads a rate in bit/s: a number with an optional k, M or G
// (powers of 1000, as for link rates) and an optional "bit/s", "bps" or
// "bit" unit: "50M", "2.5Gbit/s", "800kbps", "1e6".
func ParseRate(s string) (float64, error) { return parseRate(s) }

func parseRate(s string) (float64, error) {
	t := strings.TrimSpace(s)
	for _, unit := range []string{"bit/s", "bps", "bit"} {
		// Compare bytes, not a lower-cased copy: lowering can change the
		// length of non-ASCII input, and the cut must be made in t.
		if n := len(t) - len(unit); n >= 0 && strings.EqualFold(t[n:], unit) {
			t = strings.TrimSpace(t[:n])
			break
		}
	}
	scale := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			scale = 1e3
		case 'm', 'M':
			scale = 1e6
		case 'g', 'G':
			scale = 1e9
		}
		if scale != 1 {
			t = strings.TrimSpace(t[:len(t)-1])
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a rate like 50M", s)
	}
	v *= scale
	if v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("rate %q must be a finite, non-negative number of bit/s", s)
	}
	return v, nil
}

// parseBytes reads a size in bytes with an optional K or M (x1024).
func parseBytes(s string) (int, error) {
	t := strings.TrimSpace(s)
	scale := 1
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			scale = 1 << 10
		case 'm', 'M':
			scale = 1 << 20
		}
		if scale != 1 {
			t = t[:len(t)-1]
		}
	}
	n, err := strconv.Atoi(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size like 64K", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("size %q is negative", s)
	}
	if n > math.MaxInt32/scale {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * scale, nil
}

// FormatRate writes a rate in bit/s the way ParseRate reads it.
func FormatRate(bps float64) string {
	switch {
	case bps == 0:
		return "unlimited"
	case bps >= 1e9 && math.Mod(bps, 1e7) == 0:
		return strconv.FormatFloat(bps/1e9, 'f', -1, 64) + "G"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'f', -1, 64) + "M"
	case bps >= 1e3:
		return strconv.FormatFloat(bps/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(bps, 'f', -1, 64)
}
