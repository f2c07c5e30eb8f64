package http3

import (
	"context"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/internal/varint"
	"github.com/satquic/satquic/quic"
)

// TestConnectWaitsForClientSettings: a client whose extended CONNECT
// arrives before its SETTINGS (its control stream was delayed) gets a
// handler that may send HTTP datagrams at once (RFC 9297 section 2.1.1):
// the server holds the request until the SETTINGS come.
func TestConnectWaitsForClientSettings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sent := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set(CapsuleProtocolHeader, CapsuleProtocolValue)
			w.WriteHeader(http.StatusOK)
			s := w.(HTTPStreamer).HTTPStream()
			sent <- s.SendDatagram([]byte("first packet"))
			<-s.Context().Done()
		})
		e := newMemEnv(t, &Server{Handler: h, EnableExtendedConnect: true, EnableDatagrams: true})
		tlsConf := clientTLS()
		tlsConf.ServerName = "localhost"
		qc, err := e.client.Dial(context.Background(), net.UDPAddrFromAddrPort(memServerAddr), tlsConf, &quic.Config{EnableDatagrams: true})
		if err != nil {
			t.Fatal(err)
		}
		defer qc.CloseWithError(0, "")
		hdr, _, err := encodeExtendedConnect(connectRequest())
		if err != nil {
			t.Fatal(err)
		}
		st, err := qc.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Write(hdr); err != nil {
			t.Fatal(err)
		}
		const late = 300 * time.Millisecond
		time.Sleep(late)
		select {
		case err := <-sent:
			t.Fatalf("the handler ran before the client's SETTINGS (SendDatagram: %v)", err)
		default:
		}
		ctl, err := qc.OpenUniStream()
		if err != nil {
			t.Fatal(err)
		}
		b := varint.Append(nil, streamControl)
		if _, err := ctl.Write(appendSettingsFrame(b, settings{h3Datagram: true})); err != nil {
			t.Fatal(err)
		}
		if err := <-sent; err != nil {
			t.Fatalf("SendDatagram once the SETTINGS came: %v", err)
		}
		st.CancelRead(0)
		st.CancelWrite(0)
	})
}
