package load

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"testing"

	qghttp3 "github.com/quic-go/quic-go/http3"

	"github.com/satquic/satquic/bench/load/payload"
)

// TestRunAgainstQuicGo loads quic-go's HTTP/3 server: the generator
// speaks plain HTTP/3, not only to satquic.
func TestRunAgainstQuicGo(t *testing.T) {
	udp, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(payload.Prefix, payload.Handler())
	mux.HandleFunc("/reset", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	s := &qghttp3.Server{Handler: mux, TLSConfig: qghttp3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert(t)}})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Serve(udp)
	}()
	defer func() {
		_ = s.Close()
		_ = udp.Close()
		<-done
	}()
	base := fmt.Sprintf("https://127.0.0.1:%d", udp.LocalAddr().(*net.UDPAddr).Port)

	for _, newConn := range []bool{false, true} {
		res, err := Run(context.Background(), Options{
			URL: base + payload.Prefix + "10240", Workers: 5, Requests: 3, NewConn: newConn,
			TLS: clientTLS(t), ExpectBody: payload.Body(10240),
		})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(1)
		if newConn {
			want = 15
		}
		if res.Succeeded != 15 || res.Errors != 0 || res.Connections != want || res.Bytes != 15*10240 {
			t.Errorf("new-conn %v: %d succeeded, %d errors %v, %d connections, %d bytes", newConn, res.Succeeded,
				res.Errors, res.ErrorExamples, res.Connections, res.Bytes)
		}
	}
	res, err := Run(context.Background(), Options{URL: base + "/reset", Workers: 1, Requests: 2, TLS: clientTLS(t)})
	if err != nil || res.ErrorsByKind[KindStreamReset] != 2 {
		t.Errorf("/reset on quic-go: %v, errors %v %v", err, res.ErrorsByKind, res.ErrorExamples)
	}
}
