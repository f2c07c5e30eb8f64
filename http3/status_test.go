package http3

import "testing"

func TestStatusLine(t *testing.T) {
	for code, want := range map[int]string{
		200: "200 OK", 404: "404 Not Found", 103: "103 Early Hints", 299: "299 ", 599: "599 ", 600: "600 ", 99: "99 ",
	} {
		if got := statusLine(code); got != want {
			t.Errorf("statusLine(%d) = %q, want %q", code, got, want)
		}
	}
}
