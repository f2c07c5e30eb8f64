package testkit

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"net"
	"testing"
)

func TestPayloadIsDeterministic(t *testing.T) {
	a, b, c := Payload(1000, 7), Payload(1000, 7), Payload(1000, 8)
	if !bytes.Equal(a, b) {
		t.Fatal("the same seed gave different payloads")
	}
	if bytes.Equal(a, c) {
		t.Fatal("different seeds gave the same payload")
	}
	n, sum, err := ReadAllSum(bytes.NewReader(a))
	if err != nil || n != 1000 || sum != sha256.Sum256(a) {
		t.Fatalf("ReadAllSum = %d, %x, %v", n, sum, err)
	}
}

// TestTLSConfigsHandshake checks that ClientTLS trusts what ServerTLS
// serves, by name and by address, and agrees on the protocol.
func TestTLSConfigsHandshake(t *testing.T) {
	for _, name := range []string{"localhost", "127.0.0.1"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			s, err := ln.Accept()
			if err != nil {
				done <- err
				return
			}
			srv := tls.Server(s, ServerTLS("p"))
			done <- srv.Handshake()
			srv.Close()
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		cli := tls.Client(c, ClientTLS(name, "p"))
		if err := cli.Handshake(); err != nil {
			t.Fatalf("%s: client handshake: %v", name, err)
		}
		if got := cli.ConnectionState().NegotiatedProtocol; got != "p" {
			t.Fatalf("%s: protocol %q", name, got)
		}
		cli.Close()
		if err := <-done; err != nil {
			t.Fatalf("%s: server handshake: %v", name, err)
		}
		ln.Close()
	}
}
