package core

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"

	"github.com/satquic/satquic/internal/testkit"
)

// The TLS floor: what crypto/tls alone costs for one QUIC handshake, each
// side, with the handshake satquic's connection benchmarks make (satquic
// bench load's new connections): TLS 1.3 with the default key exchange
// (X25519MLKEM768), an ECDSA P-256 certificate the client checks by its
// SHA-256 pin, ALPN h3, the server's session ticket, no resumption. The
// two QUICConns talk in memory, with no packet, no QUIC state and no
// socket, so that a server's CPU per connection in bench load less the
// server-us/op figure is what satquic itself costs per connection.

// floorCert is a fresh self-signed ECDSA P-256 certificate, as
// bench/loadcmp makes for bench load.
func floorCert(b testing.TB) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "satquic"},
		DNSNames:     []string{"localhost"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// floorConfigs are the two ends' TLS configurations: the client trusts
// exactly cert's SHA-256, as bench load's generator does.
func floorConfigs(cert tls.Certificate) (client, server *tls.Config) {
	pin := sha256.Sum256(cert.Certificate[0])
	client = &tls.Config{
		MinVersion:         tls.VersionTLS13,
		NextProtos:         []string{"h3"},
		ServerName:         "localhost",
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return errors.New("no certificate")
			}
			if got := sha256.Sum256(raw[0]); !bytes.Equal(got[:], pin[:]) {
				return errors.New("certificate does not match the pin")
			}
			return nil
		},
	}
	server = &tls.Config{MinVersion: tls.VersionTLS13, NextProtos: []string{"h3"}, Certificates: []tls.Certificate{cert}}
	return client, server
}

// floorSide is one end of the in-memory handshake with the wall time
// spent in its calls. A QUICConn runs its handshake in a goroutine of its
// own, but every call waits for that goroutine to stop again, so the time
// inside the calls is the side's work.
type floorSide struct {
	conn   *tls.QUICConn
	params []byte
	spent  time.Duration
	done   bool
}

// pump handles every event of s at now, handing its handshake bytes to
// peer; it returns the bytes it handed over.
func (s *floorSide) pump(peer *floorSide, isServer bool) (int, error) {
	moved := 0
	for {
		start := time.Now()
		ev := s.conn.NextEvent()
		s.spent += time.Since(start)
		switch ev.Kind {
		case tls.QUICNoEvent:
			return moved, nil
		case tls.QUICWriteData:
			moved += len(ev.Data)
			data := append([]byte(nil), ev.Data...)
			start = time.Now()
			err := peer.conn.HandleData(ev.Level, data)
			peer.spent += time.Since(start)
			if err != nil {
				return moved, err
			}
		case tls.QUICTransportParametersRequired:
			s.conn.SetTransportParameters(s.params)
		case tls.QUICHandshakeDone:
			s.done = true
			if isServer {
				start = time.Now()
				err := s.conn.SendSessionTicket(tls.QUICSessionTicketOptions{})
				s.spent += time.Since(start)
				if err != nil {
					return moved, err
				}
			}
		case tls.QUICErrorEvent:
			return moved, ev.Err
		}
	}
}

// floorHandshake runs one handshake between a fresh client and server.
func floorHandshake(client, server *floorSide, clientConf, serverConf *tls.Config) error {
	client.conn = tls.QUICClient(&tls.QUICConfig{TLSConfig: clientConf, EnableSessionEvents: true})
	server.conn = tls.QUICServer(&tls.QUICConfig{TLSConfig: serverConf, EnableSessionEvents: true})
	client.done, server.done = false, false
	defer client.conn.Close()
	defer server.conn.Close()
	client.conn.SetTransportParameters(client.params)
	start := time.Now()
	err := client.conn.Start(context.Background())
	client.spent += time.Since(start)
	if err != nil {
		return err
	}
	start = time.Now()
	err = server.conn.Start(context.Background())
	server.spent += time.Since(start)
	if err != nil {
		return err
	}
	for range 16 {
		a, err := client.pump(server, false)
		if err != nil {
			return err
		}
		b, err := server.pump(client, true)
		if err != nil {
			return err
		}
		if a == 0 && b == 0 && client.done && server.done {
			return nil
		}
	}
	return errors.New("handshake did not end")
}

// floorParams are the transport parameters of a default satquic endpoint,
// which each side carries in its handshake.
func floorParams(b *testing.B, isClient bool) []byte {
	p := wire.DefaultTransportParameters()
	var id wire.ConnectionID
	p.InitialSourceConnectionID = &id
	if !isClient {
		var token wire.StatelessResetToken
		p.OriginalDestinationConnectionID, p.StatelessResetToken = &id, &token
	}
	raw, err := p.Append(nil, perspective(isClient))
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkTLSHandshakeFloor measures crypto/tls's QUIC handshake, both
// ends in memory: client-us/op and server-us/op are the time each side
// spent in its calls, cpu-us/op the process's CPU for both together
// (garbage collection included).
func BenchmarkTLSHandshakeFloor(b *testing.B) {
	clientConf, serverConf := floorConfigs(floorCert(b))
	client := &floorSide{params: floorParams(b, true)}
	server := &floorSide{params: floorParams(b, false)}
	b.ReportAllocs()
	cpu := testkit.ProcessCPU()
	for b.Loop() {
		if err := floorHandshake(client, server, clientConf, serverConf); err != nil {
			b.Fatal(err)
		}
	}
	cpu = testkit.ProcessCPU() - cpu
	n := float64(b.N)
	b.ReportMetric(float64(client.spent.Microseconds())/n, "client-us/op")
	b.ReportMetric(float64(server.spent.Microseconds())/n, "server-us/op")
	b.ReportMetric(float64(cpu.Microseconds())/n, "cpu-us/op")
}
