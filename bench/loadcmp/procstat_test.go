package loadcmp

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseProcStatCPU(t *testing.T) {
	line := "4242 (sat quic) (x)) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 9 0 123 456 789"
	d, err := parseProcStatCPU([]byte(line), 100)
	if err != nil || d != 3250*time.Millisecond {
		t.Fatalf("got %v, %v; want 3.25s", d, err)
	}
	// Large tick counts give their duration, or an error where it would
	// not fit one; never a wrapped-around negative one.
	big := "12 (x) S 1 2 3 4 5 6 7 8 9 10 4294967296 4294967297 0"
	if d, err := parseProcStatCPU([]byte(big), 100); err != nil || d != 8589934593*10*time.Millisecond {
		t.Errorf("%q: %v, %v", big, d, err)
	}
	huge := "12 (x) S 1 2 3 4 5 6 7 8 9 10 1099511627776 1099511627776 0"
	if d, err := parseProcStatCPU([]byte(huge), 100); err == nil {
		t.Errorf("%q: %v, no error", huge, d)
	}
	for _, bad := range []string{"", "12 (x S 1", "12 (x) S 1 2 3", "12 (x) S 1 2 3 4 5 6 7 8 9 10 -5 1 0", "12 (x) S 1 2 3 4 5 6 7 8 9 10 a 1 0"} {
		if _, err := parseProcStatCPU([]byte(bad), 100); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// This process: the parse of the real file works.
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if _, err := parseProcStatCPU(b, clockTicks); err != nil {
		t.Errorf("/proc/self/stat %q: %v", strings.TrimSpace(string(b)), err)
	}
}

func FuzzParseProcStatCPU(f *testing.F) {
	f.Add([]byte("1 (init) S 0 1 1 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 9 10 11"))
	f.Add([]byte("7 ()) R 1 2 3 4 5 6 7 8 9 10 99999 1"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := parseProcStatCPU(b, clockTicks)
		if err == nil && d < 0 {
			t.Fatalf("negative time %v from %q", d, b)
		}
	})
}
