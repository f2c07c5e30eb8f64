// Package h3test runs satquic's HTTP/3 server on a loopback socket for the
// tests of the packages above http3 (the load generator, the command). It
// is apart from package testkit because http3's own tests use testkit.
package h3test

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/satquic/satquic/http3"
)

// Serve runs an HTTP/3 server with h and cert on a loopback port until the
// test ends and returns its base URL, "https://127.0.0.1:PORT".
func Serve(t testing.TB, h http.Handler, cert tls.Certificate) string {
	t.Helper()
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &http3.Server{Handler: h, TLSConfig: http3.ConfigureTLS(&tls.Config{Certificates: []tls.Certificate{cert}})}
	l, err := s.Listen(udp)
	if err != nil {
		_ = udp.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-done; err != nil && err != http3.ErrServerClosed {
			t.Errorf("HTTP/3 server: %v", err)
		}
	})
	return fmt.Sprintf("https://127.0.0.1:%d", udp.LocalAddr().(*net.UDPAddr).Port)
}
