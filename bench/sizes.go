package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes ParseSize knows: decimal (kB, MB, GB, as the
// seed's "1MB" file means 10^6 bytes) and binary (KiB, MiB, GiB). Longest
// first, so that "MiB" is not read as "B".
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
	{"B", 1},
}

// maxSize bounds a download, so that a typo (1000GB) fails at once rather
// than after hours.
const maxSize = 100e9

// ParseSize reads a size like "1MB", "2.5MB", "512KiB" or "1000" (bytes).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("size %q: want a number with an optional unit (B, kB, MB, GB, KiB, MiB, GiB)", s)
	}
	// Decimal fractions ("1.234567MB") carry float error: round it off,
	// but reject a fraction of a byte.
	b := v * float64(mult)
	r := math.Round(b)
	if r < 1 || r > maxSize || math.Abs(b-r) > 1e-3 {
		return 0, fmt.Errorf("size %q: want a whole number of bytes from 1 to %.0f", s, float64(maxSize))
	}
	return int64(r), nil
}

// ParseSizes reads a comma-separated list of sizes, rejecting duplicates.
func ParseSizes(s string) ([]int64, error) {
	var out []int64
	seen := map[int64]bool{}
	for _, f := range strings.Split(s, ",") {
		b, err := ParseSize(f)
		if err != nil {
			return nil, err
		}
		if seen[b] {
			return nil, fmt.Errorf("size %q given twice", strings.TrimSpace(f))
		}
		seen[b] = true
		out = append(out, b)
	}
	return out, nil
}

// FormatSize writes a size so that it reads back to the same number:
// in binary units when it is a whole number of them, else in decimal
// units with as many decimals as it takes.
func FormatSize(b int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b%u.mult == 0 && b%1000 != 0 {
			return strconv.FormatInt(b/u.mult, 10) + u.suffix
		}
	}
	for _, u := range []struct {
		suffix string
		mult   float64
	}{{"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if float64(b) >= u.mult {
			return strconv.FormatFloat(float64(b)/u.mult, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}
