package testkit

import (
	"crypto/sha256"
	"io"
	"math/rand/v2"
)

// Payload returns n pseudo-random bytes, the same for the same seed.
func Payload(n int, seed uint64) []byte {
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16), byte(seed >> 24)})
	b := make([]byte, n)
	_, _ = r.Read(b)
	return b
}

// ReadAllSum reads r to its end and returns how many bytes it read and
// their SHA-256.
func ReadAllSum(r io.Reader) (int64, [32]byte, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return n, s, err
}
