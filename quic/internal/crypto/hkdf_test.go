package crypto

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
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
		// fast takes the SHA-256 expander of hmac256.go.
		fast bool
	}{{"SHA-256", newSHA256, false}, {"SHA-256 without crypto/hmac", newSHA256, true}, {"SHA-384", newSHA384, false}} {
		secret := bytes.Repeat([]byte{0x5a}, h.f().Size())
		e := newExpander(h.f, secret)
		if h.fast {
			e = newSHA256Expander(secret)
		}
		for _, tc := range []struct {
			label  string
			length int
		}{{"quic key", 16}, {"quic iv", 12}, {"quic hp", 32}, {"quic ku", h.f().Size()}, {"long", 100}, {"longer", 3*h.f().Size() + 5},
			{string(bytes.Repeat([]byte{'l'}, 249)), 40}} {
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
	for _, e := range []*expander{newExpander(newSHA256, make([]byte, 32)), newSHA256Expander(make([]byte, 32))} {
		if _, err := e.expandLabel("x", 255*32+1); err == nil {
			t.Error("an output of more than 255 blocks was accepted")
		}
	}
}

// TestHMACSHA256 checks the HMAC without crypto/hmac against crypto/hmac,
// for keys shorter and longer than a block and messages that fit its
// buffer or not, and HKDF-Extract against crypto/hkdf.
func TestHMACSHA256(t *testing.T) {
	for _, keyLen := range []int{0, 20, 32, 64, 65, 200} {
		key := bytes.Repeat([]byte{0xa5}, keyLen)
		for _, msgLen := range []int{0, 1, 20, 55, 56, 64, hmacInputMax, hmacInputMax + 1, 1000} {
			msg := bytes.Repeat([]byte{0x3c}, msgLen)
			var m hmacSHA256
			m.init(key)
			third := msgLen / 3
			got := m.sum(msg[:third], msg[third:2*third], msg[2*third:])
			want := hmac.New(sha256.New, key)
			want.Write(msg)
			if !bytes.Equal(got[:], want.Sum(nil)) {
				t.Errorf("key %d bytes, message %d: %x, want %x", keyLen, msgLen, got, want.Sum(nil))
			}
			prk, err := hkdf.Extract(sha256.New, msg, key)
			if err != nil {
				t.Fatal(err)
			}
			if got := extractSHA256(key, msg); !bytes.Equal(got, prk) {
				t.Errorf("Extract, salt %d bytes, input %d: %x, want %x", keyLen, msgLen, got, prk)
			}
		}
	}
}
