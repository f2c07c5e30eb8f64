package http3

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
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/quic"
)

// testCert is a self-signed certificate for localhost and the loopback
// addresses.
var testCert = func() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "satquic http3 test"},
		// Valid in a synctest bubble too, whose clock starts in 2000.
		NotBefore:   time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:    time.Now().Add(24 * time.Hour),
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
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
	return &tls.Config{Certificates: []tls.Certificate{testCert}, NextProtos: []string{NextProtoH3}}
}

// clientTLS trusts testCert only.
func clientTLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(testCert.Leaf)
	return &tls.Config{RootCAs: pool, NextProtos: []string{NextProtoH3}}
}

// payload returns n deterministic pseudo-random bytes.
func payload(n int, seed uint64) []byte {
	r := mrand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 'h', '3'})
	b := make([]byte, n)
	_, _ = r.Read(b)
	return b
}

// readAllSum reads r to its end and returns the length and SHA-256.
func readAllSum(r io.Reader) (int64, [32]byte, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return n, s, err
}

// checkGoroutines fails the test if goroutines started during it still
// run a few seconds after it ended.
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

// testServer is a Server on a loopback socket.
type testServer struct {
	*Server
	addr  string
	serve chan error
}

// startServer serves h on 127.0.0.1 until the test ends.
func startServer(t testing.TB, h http.Handler, configure ...func(*Server)) *testServer {
	t.Helper()
	s := &Server{Handler: h, TLSConfig: serverTLS()}
	for _, f := range configure {
		f(s)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.Listen(pc)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, addr: pc.LocalAddr().String(), serve: make(chan error, 1)}
	go func() { ts.serve <- s.Serve(l) }()
	t.Cleanup(func() {
		_ = s.Close()
		if err := <-ts.serve; err != ErrServerClosed {
			t.Errorf("Serve returned %v", err)
		}
	})
	return ts
}

func (ts *testServer) url(path string) string {
	return "https://" + strings.Replace(ts.addr, "127.0.0.1", "localhost", 1) + path
}

// newTransport returns a Transport that trusts testCert, closed when the
// test ends.
func newTransport(t testing.TB) *Transport {
	tr := &Transport{TLSClientConfig: clientTLS(), QUICConfig: &quic.Config{}}
	t.Cleanup(func() { _ = tr.Close() })
	return tr
}

var quicConfigStreams4 = quic.Config{MaxIncomingStreams: 4}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }
