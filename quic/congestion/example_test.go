package congestion_test

import (
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
	"strconv"
	"time"

	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/quic/congestion"
)

// aimd is additive increase, multiplicative decrease in its simplest form:
// the window doubles each round trip until the first congestion event,
// then grows by one packet per round trip and halves on congestion, at
// most once per round trip (RFC 9002 section 7.3).
type aimd struct {
	mds, window, ssthresh int
	// recoveryStart is when the window was last halved: a loss of a
	// packet sent before then belongs to the same congestion event.
	recoveryStart time.Duration
	// acked counts the bytes acknowledged, for the example's output.
	acked int64
}

func newAIMD() *aimd { return &aimd{mds: 1200, window: 10 * 1200} }

func (a *aimd) OnPacketSent(now time.Duration, bytes int, priorInFlight int64) {}

func (a *aimd) OnAck(now time.Duration, ev *congestion.AckEvent) {
	a.acked += ev.AckedBytes
	if a.InSlowStart() {
		a.window += int(ev.AckedBytes)
		return
	}
	a.window += int(int64(a.mds) * ev.AckedBytes / int64(a.window))
}

func (a *aimd) OnCongestionEvent(now time.Duration, ev *congestion.CongestionEvent) {
	if ev.Persistent {
		a.window = 2 * a.mds
		return
	}
	if a.ssthresh != 0 && ev.LargestSentTime <= a.recoveryStart {
		return
	}
	a.recoveryStart = now
	a.ssthresh = max(a.window/2, 2*a.mds)
	a.window = a.ssthresh
}

func (a *aimd) Window() int { return a.window }

// PacingRate leaves pacing to the connection: 1.25 windows per round
// trip.
func (a *aimd) PacingRate(rtt congestion.RTT) uint64 { return 0 }

func (a *aimd) InSlowStart() bool        { return a.ssthresh == 0 }
func (a *aimd) SetMaxDatagramSize(n int) { a.mds = n }

func (a *aimd) State() congestion.State {
	phase := congestion.PhaseCongestionAvoidance
	if a.InSlowStart() {
		phase = congestion.PhaseSlowStart
	}
	return congestion.State{Name: "aimd", Phase: phase, Window: a.window, SSThresh: a.ssthresh}
}

// Example uploads a megabyte over loopback with a congestion controller of
// the application's own, which quic.Config.NewCongestionController hands
// to the client's connection. The server reads the upload and closes the
// connection with the count as its reason.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	serverTLS, clientTLS := exampleTLS()
	l, err := quic.ListenAddr("127.0.0.1:0", serverTLS, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	go func() {
		conn, err := l.Accept(ctx)
		if err != nil {
			return
		}
		s, err := conn.AcceptUniStream(ctx)
		if err != nil {
			return
		}
		n, _ := io.Copy(io.Discard, s)
		_ = conn.CloseWithError(0, strconv.FormatInt(n, 10))
	}()

	var cc *aimd
	conf := &quic.Config{NewCongestionController: func() congestion.Controller {
		cc = newAIMD() // one controller per connection
		return cc
	}}
	conn, err := quic.DialAddr(ctx, l.Addr().String(), clientTLS, conf)
	if err != nil {
		log.Fatal(err)
	}
	s, err := conn.OpenUniStream()
	if err != nil {
		log.Fatal(err)
	}
	const size = 1 << 20
	if _, err := s.Write(make([]byte, size)); err != nil {
		log.Fatal(err)
	}
	_ = s.Close()
	<-conn.Context().Done() // the server closes once it has it all
	stats := conn.Stats()
	var closed *quic.ApplicationError
	if !errors.As(context.Cause(conn.Context()), &closed) {
		log.Fatal(context.Cause(conn.Context()))
	}
	fmt.Println("server got:", closed.ErrorMessage)
	fmt.Println("controller:", stats.CongestionControl)
	fmt.Println("it saw the megabyte acknowledged:", cc.acked >= size)
	// Output:
	// server got: 1048576
	// controller: aimd
	// it saw the megabyte acknowledged: true
}

// exampleTLS makes a self-signed certificate for 127.0.0.1 and the TLS
// configurations of a server and of a client that trusts it.
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
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(leaf)
	server = &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"example"},
	}
	client = &tls.Config{RootCAs: roots, NextProtos: []string{"example"}}
	return server, client
}
