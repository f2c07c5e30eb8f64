package gateway

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// testCA is a certificate authority that issues client certificates.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tunnel clients"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// issue returns a client certificate signed by ca.
func (ca *testCA) issue(t *testing.T, name string) tls.Certificate {
	t.Helper()
	return ca.sign(t, &x509.Certificate{Subject: pkix.Name{CommonName: name}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

// sign returns a certificate of tmpl's names and uses, valid for an hour
// around now, for a new key, signed by ca.
func (ca *testCA) sign(t *testing.T, tmpl *x509.Certificate) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.SerialNumber = big.NewInt(2)
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestClientCertificateAdmits: a server that admits clients by
// certificate opens a tunnel for a client with a certificate of its
// authority, and refuses one without any (with a token also allowed, so
// that the handshake lets it through to the handler's check).
func TestClientCertificateAdmits(t *testing.T) {
	ca := newTestCA(t)
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	serverTLS := testkit.ServerTLS("h3")
	serverTLS.ClientCAs, serverTLS.ClientAuth = pool, tls.VerifyClientCertIfGiven
	dev := tunneltest.NewDevice(1500)
	url := startServerDevice(t, dev, dev, ServerConfig{Token: testToken, ClientCertificates: true}, serverTLS, nil).url

	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer dcancel()
	clientTLS := testkit.ClientTLS("localhost")
	clientTLS.Certificates = []tls.Certificate{ca.issue(t, "client-1")}
	ct, err := Dial(dctx, url, DialOptions{TLSConfig: clientTLS})
	if err != nil {
		t.Fatalf("Dial with a client certificate: %v", err)
	}
	defer ct.Close()
	if len(ct.Prefixes) != 1 || !testPool.Contains(ct.Prefixes[0].Addr()) {
		t.Errorf("assigned %v", ct.Prefixes)
	}
	if _, err := Dial(dctx, url, DialOptions{TLSConfig: testkit.ClientTLS("localhost")}); err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "401") {
		t.Errorf("Dial without credentials: %v", err)
	}
}
