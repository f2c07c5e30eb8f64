package hq

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzReadRequest: any bytes from a client give a clean path or an error;
// a path that is accepted stays under the root and reads back the same
// after WriteRequest.
func FuzzReadRequest(f *testing.F) {
	for _, s := range []string{"GET /\r\n", "GET /a/b.txt\r\n", "GET /../etc/passwd\r\n", "POST /x\r\n", "GET x\n", "GET /a\x00b\r\n", "", "GET / /", "GET /a%20b?q", "GET /%2e%2e/x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		p, err := ReadRequest(bytes.NewReader(in))
		if err != nil {
			return
		}
		if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
			t.Fatalf("ReadRequest(%q) = %q: not a rooted path", in, p)
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == ".." {
				t.Fatalf("ReadRequest(%q) = %q: leaves the root", in, p)
			}
		}
		var buf bytes.Buffer
		if err := WriteRequest(&buf, EscapePath(p)); err != nil {
			t.Fatalf("WriteRequest(%q): %v", p, err)
		}
		again, err := ReadRequest(&buf)
		if err != nil || again != p {
			t.Fatalf("round trip of %q: %q, %v", p, again, err)
		}
	})
}
