package bench

import "testing"

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"1MB": 1e6, "10MB": 10e6, "20MB": 20e6, "2.5MB": 2.5e6, "1.234567MB": 1234567,
		"100kB": 1e5, "100KB": 1e5, "1GB": 1e9, "512KiB": 512 << 10, "1MiB": 1 << 20,
		"1GiB": 1 << 30, "1000": 1000, "1000B": 1000, " 3MB ": 3e6,
	} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "1XB", "0", "-1MB", "1.5B", "0.1B", "NaNMB", "Inf", "1000GB", "1e12"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes("1MB,10MB,20MB")
	if err != nil || len(got) != 3 || got[0] != 1e6 || got[1] != 10e6 || got[2] != 20e6 {
		t.Errorf("ParseSizes = %v, %v", got, err)
	}
	for _, in := range []string{"1MB,1000kB", "1MB,", "1MB,,2MB"} {
		if _, err := ParseSizes(in); err == nil {
			t.Errorf("ParseSizes(%q) accepted", in)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for b, want := range map[int64]string{
		1e6: "1MB", 20e6: "20MB", 1 << 20: "1MiB", 1e5: "100kB", 1024000: "1.024MB",
		1234567: "1.234567MB", 999: "999B", 1 << 10: "1KiB", 3 << 30: "3GiB", 2e9: "2GB",
	} {
		got := FormatSize(b)
		if got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", b, got, want)
		}
		if back, err := ParseSize(got); err != nil || back != b {
			t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", b, back, err)
		}
	}
}
