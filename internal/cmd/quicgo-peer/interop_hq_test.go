package main

import "testing"

func TestHQRequestPath(t *testing.T) {
	for _, c := range []struct {
		req, want string
		ok        bool
	}{
		{"GET /abc\r\n", "abc", true},
		{"GET /dir/file", "dir/file", true},
		{"GET /../../etc/passwd\r\n", "etc/passwd", true},
		{"GET /\r\n", "", false},
		{"POST /abc\r\n", "", false},
		{"GET /a\r\nb", "", false},
	} {
		got, ok := hqRequestPath(c.req)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %q, %v; want %q, %v", c.req, got, ok, c.want, c.ok)
		}
	}
}
