package crypto

import (
	"bytes"
	"crypto/hkdf"
	"hash"
	"testing"
)

// TestExpanderMatchesHKDF checks the reused-HMAC expansion against the
// standard library's HKDF-Expand, for outputs of one hash block, several
// blocks (where T(i) chains on T(i-1)) and a partial last block, with
// several labels in a row from one expander.
func TestExpanderMatchesHKDF(t *testing.T) {
	for _, h := range []struct {
		name string
		f    func() hash.Hash
	}{{"SHA-256", newSHA256}, {"SHA-384", newSHA384}} {
		secret := bytes.Repeat([]byte{0x5a}, h.f().Size())
		e := newExpander(h.f, secret)
		for _, tc := range []struct {
			label  string
			length int
		}{{"quic key", 16}, {"quic iv", 12}, {"quic hp", 32}, {"quic ku", h.f().Size()}, {"long", 100}, {"longer", 3*h.f().Size() + 5}} {
			got, err := e.expandLabel(tc.label, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			info, err := hkdfLabel(tc.label, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			want, err := hkdf.Expand(h.f, secret, string(info), tc.length)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s %q of %d bytes: %x, want %x", h.name, tc.label, tc.length, got, want)
			}
		}
	}
}

// TestExpanderRejectsLongOutput: HKDF-Expand yields at most 255 hash
// outputs.
func TestExpanderRejectsLongOutput(t *testing.T) {
	e := newExpander(newSHA256, make([]byte, 32))
	if _, err := e.expandLabel("x", 255*32+1); err == nil {
		t.Error("an output of more than 255 blocks was accepted")
	}
}
