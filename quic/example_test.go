package quic_test

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"strings"
	"time"

	"github.com/satquic/satquic/quic"
)

// Example runs a server and a client over loopback: the client sends a
// line on a stream, and the server answers it in capitals.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	serverConf, clientConf := exampleTLS()

	l, err := quic.ListenAddr("127.0.0.1:0", serverConf, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		conn, err := l.Accept(ctx)
		if err != nil {
			return
		}
		s, err := conn.AcceptStream(ctx)
		if err != nil {
			return
		}
		line, _ := bufio.NewReader(s).ReadString('\n')
		_, _ = io.WriteString(s, strings.ToUpper(line))
		_ = s.Close() // FIN: the client reads io.EOF after the answer
	}()

	conn, err := quic.DialAddr(ctx, l.Addr().String(), clientConf, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.CloseWithError(0, "done")
	s, err := conn.OpenStream()
	if err != nil {
		log.Fatal(err)
	}
	_, _ = io.WriteString(s, "hello, satellite\n")
	answer, err := io.ReadAll(s)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(answer))
	fmt.Println("ALPN:", conn.ConnectionState().TLS.NegotiatedProtocol)
	// Output:
	// HELLO, SATELLITE
	// ALPN: example
}

// ExampleTransport shows one socket in both roles: it listens and dials
// out, and datagrams are told apart by connection ID.
func ExampleTransport() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	serverConf, clientConf := exampleTLS()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer pc.Close()
	t := &quic.Transport{Conn: pc}
	defer t.Close()
	l, err := t.Listen(serverConf, nil)
	if err != nil {
		log.Fatal(err)
	}
	go func() {
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			s, err := c.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			b, _ := io.ReadAll(s)
			fmt.Printf("server got %q\n", b)
			_ = c.CloseWithError(0, "")
		}
	}()
	// The Transport dials its own Listener.
	c, err := t.Dial(ctx, pc.LocalAddr(), clientConf, &quic.Config{MaxIdleTimeout: time.Minute})
	if err != nil {
		log.Fatal(err)
	}
	s, _ := c.OpenUniStream()
	_, _ = s.Write([]byte("one socket, two roles"))
	_ = s.Close()
	<-c.Context().Done()
	var appErr *quic.ApplicationError
	fmt.Println("closed by the server:", errors.As(context.Cause(c.Context()), &appErr) && appErr.Remote)
	// Output:
	// server got "one socket, two roles"
	// closed by the server: true
}

// ExampleStream_SetReadDeadline shows a Read that times out.
func ExampleStream_SetReadDeadline() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	serverConf, clientConf := exampleTLS()
	l, err := quic.ListenAddr("127.0.0.1:0", serverConf, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	conn, err := quic.DialAddr(ctx, l.Addr().String(), clientConf, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.CloseWithError(0, "")
	s, _ := conn.OpenStream()
	_ = s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = s.Read(make([]byte, 100)) // the server never writes
	var ne net.Error
	fmt.Println(errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout())
	// Output: true true
}

// exampleTLS makes a self-signed certificate for 127.0.0.1 and the TLS
// configurations of a server and of a client that trusts it. QUIC
// requires an application protocol (ALPN) on both sides.
// ExampleDialAddrEarly resumes a session: the second connection sends its
// request in 0-RTT packets, with the first flight of its handshake, where
// a server that allows 0-RTT takes it. The client's session cache keeps
// the server's ticket between the connections.
func ExampleDialAddrEarly() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	serverConf, clientConf := exampleTLS()
	clientConf.ClientSessionCache = tls.NewLRUClientSessionCache(8)

	// The request is safe to repeat, so the server accepts it in 0-RTT.
	l, err := quic.ListenAddr("127.0.0.1:0", serverConf, &quic.Config{Allow0RTT: true})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept(ctx)
			if err != nil {
				return
			}
			go func() {
				for {
					s, err := conn.AcceptStream(ctx)
					if err != nil {
						return
					}
					line, _ := bufio.NewReader(s).ReadString('\n')
					_, _ = io.WriteString(s, strings.ToUpper(line))
					_ = s.Close()
				}
			}()
		}
	}()

	for range 2 {
		conn, err := quic.DialAddrEarly(ctx, l.Addr().String(), clientConf, nil)
		if err != nil {
			log.Fatal(err)
		}
		// With a ticket, the stream opens at once; without one, when
		// the handshake completed.
		s, err := conn.OpenStreamSync(ctx)
		if err != nil {
			log.Fatal(err)
		}
		_, _ = io.WriteString(s, "ping\n")
		_ = s.Close()
		answer, err := io.ReadAll(s)
		if err != nil {
			log.Fatal(err)
		}
		st := conn.ConnectionState()
		fmt.Printf("%s resumed: %v, 0-RTT: %v\n", strings.TrimSpace(string(answer)), st.TLS.DidResume, st.Used0RTT)
		_ = conn.CloseWithError(0, "")
	}
	// Output:
	// PING resumed: false, 0-RTT: false
	// PING resumed: true, 0-RTT: true
}

func exampleTLS() (server, client *tls.Config) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		log.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		log.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	server = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"example"},
	}
	client = &tls.Config{RootCAs: roots, NextProtos: []string{"example"}}
	return server, client
}
