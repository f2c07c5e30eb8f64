package hq

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// SelfSigned makes an ECDSA P-256 certificate for hosts (names or IP
// addresses), valid for a year from now.
func SelfSigned(hosts []string, now time.Time) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "satquic"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// Fingerprint is the SHA-256 of a DER certificate, in lower-case hex: what
// a client pins.
func Fingerprint(der []byte) string {
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:])
}

// ErrPinMismatch reports a server certificate that is not the pinned one.
var ErrPinMismatch = errors.New("hq: server certificate does not match the pinned SHA-256")

// ParsePin normalizes a pinned fingerprint: 64 hex digits, with or without
// colons, in either case.
func ParsePin(pin string) (string, error) {
	p := strings.ToLower(strings.ReplaceAll(pin, ":", ""))
	if b, err := hex.DecodeString(p); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("hq: pin %q is not a SHA-256 in hex", pin)
	}
	return p, nil
}

// VerifyPin returns a tls.Config.VerifyPeerCertificate that accepts exactly
// the certificate whose fingerprint is pin (from ParsePin). Set
// InsecureSkipVerify with it: the pin replaces the chain of trust.
func VerifyPin(pin string) func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
	return func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
		if len(rawCerts) == 0 {
			return ErrPinMismatch
		}
		if got := Fingerprint(rawCerts[0]); got != pin {
			return fmt.Errorf("%w: got %s", ErrPinMismatch, got)
		}
		return nil
	}
}
