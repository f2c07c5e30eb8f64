package load

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/internal/testkit/h3test"
)

var (
	certOnce sync.Once
	testCert tls.Certificate
	certErr  error
)

// cert is a self-signed certificate for localhost and 127.0.0.1, made
// once per test binary.
func cert(t testing.TB) tls.Certificate {
	certOnce.Do(func() { testCert, certErr = hq.SelfSigned([]string{"localhost", "127.0.0.1"}, time.Now()) })
	if certErr != nil {
		t.Fatal(certErr)
	}
	return testCert
}

// clientTLS trusts the test certificate only.
func clientTLS(t testing.TB) *tls.Config {
	c := cert(t)
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return &tls.Config{RootCAs: pool}
}

// serve runs satquic's HTTP/3 server with h on a loopback port until the
// test ends and returns its base URL, "https://127.0.0.1:PORT".
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	return h3test.Serve(t, h, cert(t))
}
