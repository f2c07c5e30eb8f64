package hq_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// Example serves a directory on loopback and fetches a file from it,
// trusting the server's self-signed certificate by its fingerprint.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "hq-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello over QUIC\n"), 0o644); err != nil {
		log.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer root.Close()

	cert, err := hq.SelfSigned([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		log.Fatal(err)
	}
	l, err := quic.ListenAddr("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{hq.ALPN}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	srv := &hq.Server{Root: root}
	go func() { _ = srv.Serve(ctx, l) }()

	pin := hq.Fingerprint(cert.Certificate[0])
	clientConf := &tls.Config{NextProtos: []string{hq.ALPN}, InsecureSkipVerify: true, VerifyPeerCertificate: hq.VerifyPin(pin)}
	c, err := quic.DialAddr(ctx, l.Addr().String(), clientConf, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	var body bytes.Buffer
	n, err := hq.Get(ctx, c, "/hello.txt", &body, nil)
	fmt.Printf("%d bytes, %v: %s", n, err, body.String())
	_, err = hq.Get(ctx, c, "/../etc/passwd", &body, nil)
	fmt.Println(err != nil)
	// Output:
	// 16 bytes, <nil>: hello over QUIC
	// true
}
