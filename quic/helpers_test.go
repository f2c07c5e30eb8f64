package quic

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"
)

const testALPN = "satquic-test"

// testCert is one self-signed certificate for the package's tests, valid
// for localhost, 127.0.0.1, ::1 and the memnet addresses.
var testCert = func() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "satquic test"},
		// Valid in a synctest bubble, whose clock starts in 2000, and
		// in real time.
		NotBefore:   time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:    time.Now().Add(100 * 365 * 24 * time.Hour),
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, net.IPv4(10, 0, 0, 2)},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}()

func serverTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{testCert}, NextProtos: []string{testALPN}}
}

// clientTLS trusts testCert only.
func clientTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(testCert.Leaf)
	return &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{testALPN}}
}

// payload returns n deterministic pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	r := mrand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8)})
	b := make([]byte, n)
	_, _ = r.Read(b)
	return b
}

func sum(b []byte) [32]byte { return sha256.Sum256(b) }

// readAllSum reads r to its end and returns the length and SHA-256.
func readAllSum(r io.Reader) (int64, [32]byte, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return n, s, err
}

// checkGoroutines fails the test if goroutines started during it are
// still running shortly after it ends (real-time tests; synctest checks
// its bubble itself).
func checkGoroutines(t testing.TB) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			now := runtime.NumGoroutine()
			if now <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("%d goroutines before the test, %d after:\n%s", before, now, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}
