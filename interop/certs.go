//go:build linux

package interop

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certificate is a server's chain as the runner's certs.sh makes it: RSA
// 2048 keys, a root that is not sent, and length certificates sent (the
// leaf, then intermediates). RSA makes a long chain long: nine of them
// are over 7500 bytes, which amplificationlimit needs to be more than a
// server may send before the client's address is validated.
type certificate struct {
	tls tls.Certificate
	// certFile and keyFile are the chain and the leaf's key in PEM, for
	// the peers' servers.
	certFile, keyFile string
}

// certificateNames are the names the leaf is valid for.
var certificateNames = []string{"localhost", "server", "server4", "server6"}

func newCertificate(dir string, length int) (*certificate, error) {
	now := time.Now()
	issuerKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	issuer := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{Organization: []string{"satquic interop root"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	issuerDER, err := x509.CreateCertificate(rand.Reader, issuer, issuer, &issuerKey.PublicKey, issuerKey)
	if err != nil {
		return nil, err
	}
	if issuer, err = x509.ParseCertificate(issuerDER); err != nil {
		return nil, err
	}
	var chain [][]byte // root side first
	var leafKey *rsa.PrivateKey
	for i := 1; i <= length; i++ {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(int64(i + 1)),
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(7 * 24 * time.Hour),
		}
		if i < length {
			tmpl.Subject = pkix.Name{Organization: []string{fmt.Sprintf("satquic interop intermediate %d", i)}}
			tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
		} else {
			tmpl.Subject = pkix.Name{Organization: []string{"satquic interop leaf"}}
			tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
			tmpl.DNSNames = certificateNames
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, issuer, &key.PublicKey, issuerKey)
		if err != nil {
			return nil, err
		}
		chain = append(chain, der)
		if issuer, err = x509.ParseCertificate(der); err != nil {
			return nil, err
		}
		issuerKey, leafKey = key, key
	}
	c := &certificate{
		certFile: filepath.Join(dir, "cert.pem"),
		keyFile:  filepath.Join(dir, "priv.key"),
	}
	var certPEM []byte
	for i := len(chain) - 1; i >= 0; i-- {
		c.tls.Certificate = append(c.tls.Certificate, chain[i])
		certPEM = append(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: chain[i]})...)
	}
	c.tls.PrivateKey = leafKey
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.certFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return c, nil
}
