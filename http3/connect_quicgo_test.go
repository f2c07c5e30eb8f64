package http3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
	qghttp3 "github.com/quic-go/quic-go/http3"
	"github.com/satquic/satquic/internal/testkit"
)

// Extended CONNECT and capsules against quic-go's HTTP/3 in both
// directions. HTTP datagrams are left out: they need QUIC DATAGRAM
// frames at both ends.

// capsuleExchange writes capsules of several sizes to rw and checks that
// each comes back from the echo with its type plus one.
func capsuleExchange(t *testing.T, rw io.ReadWriter) {
	t.Helper()
	for i, n := range []int{0, 10, 1200, 40 << 10} {
		p := testkit.Payload(n, uint64(i))
		if err := WriteCapsule(rw, CapsuleType(i), p); err != nil {
			t.Fatalf("WriteCapsule: %v", err)
		}
		typ, got, err := ReadCapsule(rw, 0)
		if err != nil || typ != CapsuleType(i+1) || !bytes.Equal(got, p) {
			t.Fatalf("capsule %d back: type %#x, %d bytes, %v", i, typ, len(got), err)
		}
	}
}

// echoCapsules sends back each capsule of rw with its type plus one,
// until rw ends.
func echoCapsules(rw io.ReadWriter) {
	for {
		typ, p, err := ReadCapsule(rw, 0)
		if err != nil {
			return
		}
		if WriteCapsule(rw, typ+1, p) != nil {
			return
		}
	}
}

// TestQuicGoExtendedConnectServer: this package's ExtendedConnect
// against quic-go's Server, which always allows extended CONNECT.
func TestQuicGoExtendedConnectServer(t *testing.T) {
	testkit.CheckGoroutines(t)
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	handlerDone := make(chan struct{})
	// quic-go's server offers HTTP datagrams, which this client, whose
	// QUIC connection has no DATAGRAM frames, does not use: the setting
	// is ignored.
	srv := &qghttp3.Server{TLSConfig: qghttp3.ConfigureTLSConfig(serverTLS()),
		EnableDatagrams: true, QUICConfig: &quicgo.Config{EnableDatagrams: true}}
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		if r.Method != http.MethodConnect || r.Proto != "connect-ip" || r.URL.Path != "/masque" || !CapsuleProtocol(r.Header) {
			t.Errorf("quic-go's server got %s %s %v %v", r.Method, r.Proto, r.URL, r.Header)
		}
		w.Header().Set(CapsuleProtocolHeader, CapsuleProtocolValue)
		w.WriteHeader(http.StatusOK)
		st, err := w.(qghttp3.HTTPStreamer).HTTPStream()
		if err != nil {
			t.Errorf("HTTPStream: %v", err)
			return
		}
		echoCapsules(st)
		_ = st.Close()
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(udp)
	}()
	defer func() {
		_ = srv.Close()
		_ = udp.Close()
		<-done
	}()
	tr := newTransport(t)
	u, _ := url.Parse(fmt.Sprintf("https://localhost:%d/masque", udp.LocalAddr().(*net.UDPAddr).Port))
	req := &http.Request{Method: http.MethodConnect, Proto: "connect-ip", URL: u,
		Header: http.Header{CapsuleProtocolHeader: {CapsuleProtocolValue}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, s, err := tr.ExtendedConnect(ctx, req)
	if err != nil {
		t.Fatalf("ExtendedConnect: %v", err)
	}
	if resp.StatusCode != http.StatusOK || s == nil || !CapsuleProtocol(resp.Header) {
		t.Fatalf("response %d %v", resp.StatusCode, resp.Header)
	}
	capsuleExchange(t, s)
	_ = s.Close()
	select {
	case <-handlerDone:
	case <-time.After(10 * time.Second):
		t.Fatal("quic-go's handler did not see the stream end")
	}
}

// TestQuicGoExtendedConnectClient: quic-go's ClientConn sends an
// extended CONNECT to this package's Server.
func TestQuicGoExtendedConnectClient(t *testing.T) {
	testkit.CheckGoroutines(t)
	ts := startServer(t, echoTunnel(t, nil), func(s *Server) { s.EnableExtendedConnect = true })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tlsConf := clientTLS()
	tlsConf.ServerName = "localhost"
	qc, err := quicgo.DialAddr(ctx, ts.addr, tlsConf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	tr := &qghttp3.Transport{}
	cc := tr.NewClientConn(qc)
	select {
	case <-cc.ReceivedSettings():
	case <-ctx.Done():
		t.Fatal("no SETTINGS from the server")
	}
	if !cc.Settings().EnableExtendedConnect {
		t.Fatal("quic-go does not see SETTINGS_ENABLE_CONNECT_PROTOCOL")
	}
	rs, err := cc.OpenRequestStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodConnect, "https://localhost/.well-known/masque/ip/*/*/", nil)
	req.Proto = "connect-ip"
	req.Header.Set(CapsuleProtocolHeader, CapsuleProtocolValue)
	if err := rs.SendRequestHeader(req); err != nil {
		t.Fatal(err)
	}
	resp, err := rs.ReadResponse()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || !CapsuleProtocol(resp.Header) {
		t.Fatalf("response %d %v", resp.StatusCode, resp.Header)
	}
	capsuleExchange(t, rs)
	_ = rs.Close()
	// The server's echo ends its side when it reads the end.
	if n, err := rs.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after Close: %d, %v", n, err)
	}
}
