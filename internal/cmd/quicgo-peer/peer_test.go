package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testServerName = "peer.test"

// writeTestCertificate writes a self-signed certificate for testServerName
// and its key, and returns their paths.
func writeTestCertificate(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: testServerName},
		DNSNames: []string{testServerName}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// startServer runs serve on loopback until the test ends and returns the
// address it announced.
func startServer(t *testing.T, certFile, keyFile string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serveUntil(ctx, serveOptions{addr: "127.0.0.1:0", certFile: certFile, keyFile: keyFile}, pw)
		pw.CloseWithError(io.EOF)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	line, err := bufio.NewReader(pr).ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the announced address: %v", err)
	}
	go io.Copy(io.Discard, pr)
	var l listeningLine
	if err := json.Unmarshal(line, &l); err != nil || !strings.HasPrefix(l.Listening, "127.0.0.1:") {
		t.Fatalf("announcement %q: %v", line, err)
	}
	return l.Listening
}

// schedulingSlack is how late a goroutine woken on a busy 2-core machine
// may run, generously.
const schedulingSlack = 200 * time.Millisecond

func TestServeAndGet(t *testing.T) {
	certFile, keyFile := writeTestCertificate(t)
	addr := startServer(t, certFile, keyFile)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	base := "https://" + addr + bytesPath

	for _, n := range []int64{0, 1, 1<<20 + 3} {
		o := getOptions{url: base + "?n=" + strconv.FormatInt(n, 10), caFile: certFile, serverName: testServerName, expect: n}
		res, err := download(ctx, o)
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		// The handshake's time is stamped by a goroutine that
		// quic-go's HandshakeComplete wakes; a busy scheduler may run
		// it after the response headers were read, so the first byte
		// may seem to precede it by a scheduling delay, never more.
		if res.Status != 200 || res.Bytes != n || res.HandshakeNs <= 0 || res.FirstByteNs <= 0 ||
			res.FirstByteNs < res.HandshakeNs-schedulingSlack.Nanoseconds() ||
			res.ElapsedNs < res.FirstByteNs || res.PacketsReceived == 0 || res.SmoothedRTTNs <= 0 {
			t.Errorf("%d bytes: %+v", n, res)
		}
	}

	for _, c := range []struct {
		o    getOptions
		want string
	}{
		{getOptions{url: base + "?n=10", caFile: certFile, serverName: testServerName, expect: 11}, "received 10 bytes, want 11"},
		{getOptions{url: base + "?n=x", insecure: true, expect: -1}, "400 Bad Request"},
		{getOptions{url: "https://" + addr + "/other", insecure: true, expect: -1}, "404"},
		// The certificate names testServerName, not the address.
		{getOptions{url: base + "?n=10", caFile: certFile, expect: -1}, "certificate"},
		{getOptions{url: base + "?n=10", caFile: keyFile, serverName: testServerName, expect: -1}, "no PEM certificate"},
	} {
		if _, err := download(ctx, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error with %q", c.o, err, c.want)
		}
	}
}

func TestGetGivesUp(t *testing.T) {
	// Nothing answers on the port: the handshake cannot finish, and the
	// timeout ends the attempt with its reason.
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := dispatch([]string{"get", "--url", "https://127.0.0.1:9/bytes?n=1", "--insecure", "--timeout", "300ms"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no completion within 300ms") {
		t.Errorf("get from nowhere: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("giving up took %v", d)
	}
	if stdout.Len() != 0 {
		t.Errorf("a failed get printed %q", stdout.String())
	}
}

func TestServeRefusesBadCertificate(t *testing.T) {
	certFile, _ := writeTestCertificate(t)
	var stdout bytes.Buffer
	err := serveUntil(context.Background(), serveOptions{addr: "127.0.0.1:0", certFile: certFile, keyFile: certFile}, &stdout)
	if err == nil || !strings.Contains(err.Error(), "loading the certificate") {
		t.Errorf("serve with a certificate for a key: %v", err)
	}
	if stdout.Len() != 0 {
		t.Errorf("a server that could not start announced %q", stdout.String())
	}
}

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name a subcommand"},
		{[]string{"fetch"}, `unknown subcommand "fetch"`},
		{[]string{"serve"}, "serve needs --addr"},
		{[]string{"serve", "--addr", "127.0.0.1", "--cert", "c", "--key", "k"}, "--addr"},
		{[]string{"serve", "--addr", "127.0.0.1:0", "--cert", "c"}, "serve needs --key"},
		{[]string{"serve", "--addr", ":0", "--cert", "c", "--key", "k", "extra"}, `unexpected argument "extra"`},
		{[]string{"get"}, "get needs --url"},
		{[]string{"get", "--url", "http://h:1/", "--insecure"}, "want https://"},
		{[]string{"get", "--url", "https://h:1/"}, "exactly one of --ca and --insecure"},
		{[]string{"get", "--url", "https://h:1/", "--insecure", "--ca", "f"}, "exactly one of --ca and --insecure"},
		{[]string{"get", "--url", "https://h:1/", "--insecure", "--server-name", "x"}, "--server-name"},
		{[]string{"get", "--url", "https://h:1/", "--insecure", "--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"get", "--url", "https://h:1/", "--insecure", "--expect", "-2"}, "--expect"},
		{[]string{"get", "--nope"}, "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		err := dispatch(c.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error with %q", c.args, err, c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if err := dispatch([]string{"get", "--help"}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "--expect") {
		t.Errorf("get --help: %v, %q", err, stderr.String())
	}
	stdout.Reset()
	if err := dispatch([]string{"help"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "serve") || !strings.Contains(stdout.String(), "get") {
		t.Errorf("help: %v, %q", err, stdout.String())
	}
}

// TestGetResume: with --resume, the connection measured resumes the
// first one's session and its GET goes in 0-RTT.
func TestGetResume(t *testing.T) {
	certFile, keyFile := writeTestCertificate(t)
	addr := startServer(t, certFile, keyFile)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := getOptions{url: "https://" + addr + bytesPath + "?n=5000", caFile: certFile, serverName: testServerName, expect: 5000, resume: true}
	res, err := download(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes != 5000 || !res.Resumed || !res.Used0RTT {
		t.Errorf("resumed download: %+v", res)
	}
}
