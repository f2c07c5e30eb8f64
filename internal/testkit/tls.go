package testkit

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"sync"
	"time"
)

var (
	certOnce sync.Once
	cert     tls.Certificate
)

// Cert is a self-signed ECDSA certificate for localhost, 127.0.0.1, ::1 and
// 10.0.0.2 (the simulated server's address), made once per test binary. It
// is valid from 1999 for a hundred years, so that it verifies in real time
// and inside a synctest bubble, whose clock starts in 2000.
func Cert() tls.Certificate {
	certOnce.Do(func() {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic("testkit: " + err.Error())
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1),
			Subject:      pkix.Name{CommonName: "satquic test"},
			NotBefore:    time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC),
			NotAfter:     time.Now().Add(100 * 365 * 24 * time.Hour),
			DNSNames:     []string{"localhost"},
			IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 2)},
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
		if err != nil {
			panic("testkit: " + err.Error())
		}
		leaf, err := x509.ParseCertificate(der)
		if err != nil {
			panic("testkit: " + err.Error())
		}
		cert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	})
	return cert
}

// ServerTLS serves Cert for the application protocols alpn.
func ServerTLS(alpn ...string) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{Cert()}, NextProtos: alpn}
}

// ClientTLS trusts Cert only and offers alpn. serverName may be empty: the
// dialer then verifies the name or address it dials.
func ClientTLS(serverName string, alpn ...string) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(Cert().Leaf)
	return &tls.Config{RootCAs: pool, ServerName: serverName, NextProtos: alpn}
}
