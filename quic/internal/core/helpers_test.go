package core

import (
	"crypto/ed25519"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"math/rand/v2"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
)

const testALPN = "satquic-test"

var (
	certOnce sync.Once
	testCert tls.Certificate
	testPool *x509.CertPool
)

// loadTestCert makes a self-signed Ed25519 certificate from a fixed seed,
// so that handshake messages have the same size in every run.
func loadTestCert(t testing.TB) {
	certOnce.Do(func() {
		key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(1),
			Subject:      pkix.Name{CommonName: "satquic.test"},
			DNSNames:     []string{"satquic.test"},
			NotBefore:    time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC),
			NotAfter:     time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC),
		}
		der, err := x509.CreateCertificate(nil, tmpl, tmpl, key.Public(), key)
		if err != nil {
			panic(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			panic(err)
		}
		testCert = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}
		testPool = x509.NewCertPool()
		testPool.AddCert(cert)
	})
}

// seededReader is a deterministic io.Reader for connection IDs and tokens.
type seededReader struct{ r *rand.ChaCha8 }

func newSeeded(seed uint64) io.Reader {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return seededReader{rand.NewChaCha8(s)}
}

func (s seededReader) Read(p []byte) (int, error) { return s.r.Read(p) }

// testConfigs returns a client and a server configuration that trust each
// other, with seeded randomness.
func testConfigs(t testing.TB, seed uint64) (client, server *Config) {
	loadTestCert(t)
	client = &Config{
		TLS: &tls.Config{
			RootCAs:    testPool,
			ServerName: "satquic.test",
			NextProtos: []string{testALPN},
		},
		Rand: newSeeded(seed),
	}
	server = &Config{
		TLS: &tls.Config{
			Certificates: []tls.Certificate{testCert},
			NextProtos:   []string{testALPN},
		},
		Rand: newSeeded(seed + 1),
	}
	return client, server
}

var (
	clientAddr = netip.MustParseAddrPort("10.0.0.1:4433")
	serverAddr = netip.MustParseAddrPort("10.0.0.2:443")
)

func newResetKey() (*crypto.ResetKey, error) {
	return crypto.NewResetKey([]byte("0123456789abcdef0123456789abcdef"))
}

func asConnError(err error, ce **ConnError) bool { return errors.As(err, ce) }
