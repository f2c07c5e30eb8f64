package crypto

import (
	"crypto/hkdf"
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
	info, err := hkdfLabel(label, length)
	if err != nil {
		return nil, err
	}
	out, err := hkdf.Expand(h, secret, string(info), length)
	if err != nil {
		return nil, fmt.Errorf("quic crypto: HKDF-Expand-Label %q: %w", label, err)
	}
	return out, nil
}
