package bench

import "testing"

// FuzzParseSize: a size from the command line is an error or a whole
// number of bytes in range that FormatSize writes back to the same value.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1MB", "2.5MB", "512KiB", "1000", "0", "-1MB", "1e400", "NaN", "1.0000001B", " 20MB "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseSize(s)
		if err != nil {
			return
		}
		if b < 1 || b > maxSize {
			t.Fatalf("ParseSize(%q) = %d: out of range", s, b)
		}
		again, err := ParseSize(FormatSize(b))
		if err != nil || again != b {
			t.Fatalf("ParseSize(FormatSize(%d) = %q) = %d, %v", b, FormatSize(b), again, err)
		}
	})
}
