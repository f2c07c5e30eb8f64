package load

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/hq"
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
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &http3.Server{Handler: h, TLSConfig: http3.ConfigureTLS(&tls.Config{Certificates: []tls.Certificate{cert(t)}})}
	l, err := s.Listen(udp)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(l)
	}()
	t.Cleanup(func() {
		_ = s.Close()
		<-done
	})
	return fmt.Sprintf("https://127.0.0.1:%d", udp.LocalAddr().(*net.UDPAddr).Port)
}
