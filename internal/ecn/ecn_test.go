package ecn

import "testing"

func TestString(t *testing.T) {
	for c, want := range map[Codepoint]string{NotECT: "Not-ECT", ECT1: "ECT(1)", ECT0: "ECT(0)", CE: "CE", CE | 0b100: "CE"} {
		if got := c.String(); got != want {
			t.Errorf("%d: %q, want %q", uint8(c), got, want)
		}
	}
}
