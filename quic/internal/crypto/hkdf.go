package crypto

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"hash"
)

// tls13LabelPrefix is prepended to every HKDF-Expand-Label label
// (RFC 8446 section 7.1).
const tls13LabelPrefix = "tls13 "

// hkdfLabel encodes the HkdfLabel structure of RFC 8446 section 7.1 with
// the zero-length context that every QUIC use takes (RFC 9001 section 5.1):
//
//	uint16 length || opaque label<7..255> = "tls13 " + label || opaque context<0..255> = ""
func hkdfLabel(label string, length int) ([]byte, error) {
	full := len(tls13LabelPrefix) + len(label)
	if full > 255 || length > 0xffff || length <= 0 {
		return nil, fmt.Errorf("quic crypto: HKDF-Expand-Label %q of %d bytes cannot be encoded", label, length)
	}
	info := make([]byte, 0, 2+1+full+1)
	info = append(info, byte(length>>8), byte(length), byte(full))
	info = append(info, tls13LabelPrefix...)
	info = append(info, label...)
	return append(info, 0), nil
}

// expandLabel is HKDF-Expand-Label(secret, label, "", length).
func expandLabel(h func() hash.Hash, secret []byte, label string, length int) ([]byte, error) {
	return newExpander(h, secret).expandLabel(label, length)
}

// expander computes HKDF-Expand-Label outputs of one secret. A set of
// packet keys takes three or four labels of the same secret (key, iv, hp,
// and ku for the next key phase): one HMAC keyed once and reset between
// labels spares the keying (two hash blocks and a state copy) of a fresh
// HMAC per label, which costs as much as the expansion of a short output.
// With SHA-256 the key's pads are kept instead (hmac256.go).
type expander struct {
	mac  hash.Hash // nil with SHA-256
	used bool
	// sha256 is the HMAC of an expander from newSHA256Expander.
	sha256 hmacSHA256
}

// newExpander keys an HMAC with secret, the pseudorandom key PRK of HKDF.
func newExpander(h func() hash.Hash, secret []byte) *expander {
	return &expander{mac: hmac.New(h, secret)}
}

// newSHA256Expander is newExpander for SHA-256, without crypto/hmac.
func newSHA256Expander(secret []byte) *expander {
	e := &expander{}
	e.sha256.init(secret)
	return e
}

// newExpander is an expander of secret with the suite's hash.
func (s *suite) newExpander(secret []byte) *expander {
	if s.sha256 {
		return newSHA256Expander(secret)
	}
	return newExpander(s.hash, secret)
}

// expandLabel is HKDF-Expand (RFC 5869 section 2.3) of the HkdfLabel of
// label (RFC 8446 section 7.1): the first length bytes of T(1) | T(2) |
// ..., where T(i) = HMAC(PRK, T(i-1) | info | i) and T(0) is empty.
func (e *expander) expandLabel(label string, length int) ([]byte, error) {
	info, err := hkdfLabel(label, length)
	if err != nil {
		return nil, err
	}
	if e.mac == nil {
		return e.expandSHA256(info, length)
	}
	size := e.mac.Size()
	blocks := (length + size - 1) / size
	if blocks > 255 {
		return nil, fmt.Errorf("quic crypto: HKDF-Expand-Label %q: %d bytes is more than 255 hash outputs", label, length)
	}
	out := make([]byte, 0, blocks*size)
	var prev []byte
	for i := 1; i <= blocks; i++ {
		if e.used {
			e.mac.Reset()
		}
		e.used = true
		e.mac.Write(prev)
		e.mac.Write(info)
		e.mac.Write([]byte{byte(i)})
		n := len(out)
		out = e.mac.Sum(out)
		prev = out[n:]
	}
	return out[:length:length], nil
}

// expandSHA256 is expandLabel's HKDF-Expand of info with SHA-256.
func (e *expander) expandSHA256(info []byte, length int) ([]byte, error) {
	blocks := (length + sha256.Size - 1) / sha256.Size
	if blocks > 255 {
		return nil, fmt.Errorf("quic crypto: HKDF-Expand-Label of %d bytes: more than 255 hash outputs", length)
	}
	out := make([]byte, 0, blocks*sha256.Size)
	var prev []byte
	for i := 1; i <= blocks; i++ {
		t := e.sha256.sum(prev, info, []byte{byte(i)})
		out = append(out, t[:]...)
		prev = out[len(out)-sha256.Size:]
	}
	return out[:length:length], nil
}
