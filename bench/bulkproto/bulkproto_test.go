package bulkproto

import (
	"bytes"
	"testing"
)

func TestParseRequest(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRequest(&b, 300e6); err != nil {
		t.Fatal(err)
	}
	whole := b.Bytes()
	if n, err := ParseRequest(bytes.NewReader(whole)); err != nil || n != 300e6 {
		t.Errorf("ParseRequest = %d, %v", n, err)
	}
	for i := range len(whole) {
		if _, err := ParseRequest(bytes.NewReader(whole[:i])); err == nil {
			t.Errorf("a request cut to %d bytes parsed", i)
		}
	}
	if _, err := ParseRequest(bytes.NewReader([]byte{0xff, 0, 0, 0, 0, 0, 0, 0})); err == nil {
		t.Error("an absurd size parsed")
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 10})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := ParseRequest(bytes.NewReader(b))
		if err == nil && (len(b) < 8 || n < 0 || n > MaxSize) {
			t.Errorf("%x parsed as %d", b, n)
		}
	})
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tx\nVmPeak:\t  9 kB\nVmRSS:\t    1234 kB\nThreads:\t4\n"
	if got := parseVmRSS([]byte(status)); got != 1234<<10 {
		t.Errorf("parseVmRSS = %d", got)
	}
	for i := range len(status) {
		// A cut file gives the right figure or none, never a wrong one.
		got := parseVmRSS([]byte(status[:i]))
		if got != 0 && got != 1234<<10 {
			t.Errorf("cut at %d: %d", i, got)
		}
	}
	for _, s := range []string{"VmRSS: 12 MB\n", "VmRSS: x kB\n", "VmRSS:\n", ""} {
		if got := parseVmRSS([]byte(s)); got != 0 {
			t.Errorf("parseVmRSS(%q) = %d", s, got)
		}
	}
}

func FuzzParseVmRSS(f *testing.F) {
	f.Add([]byte("VmRSS:\t    1234 kB\n"))
	f.Add([]byte("VmRSS: 99999999999999999999 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got := parseVmRSS(b); got > 1<<50 {
			t.Errorf("%q: %d", b, got)
		}
	})
}

// TestWriteRead: what Write sends, Read counts, across Chunk's end.
func TestWriteRead(t *testing.T) {
	var b bytes.Buffer
	n := int64(len(Chunk) + 12345)
	if err := Write(&b, n); err != nil {
		t.Fatal(err)
	}
	if got, err := Read(&b); err != nil || got != n {
		t.Errorf("read %d bytes, %v; want %d", got, err, n)
	}
}
