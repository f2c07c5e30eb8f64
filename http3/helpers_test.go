package http3

import (
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/satquic/satquic/internal/testkit"
	"github.com/satquic/satquic/quic"
)

func serverTLS() *tls.Config { return testkit.ServerTLS(NextProtoH3) }

// clientTLS trusts testkit's certificate only.
func clientTLS() *tls.Config { return testkit.ClientTLS("", NextProtoH3) }

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
