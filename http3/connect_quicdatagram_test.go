package http3

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestExtendedConnectQUICDatagrams: with EnableDatagrams on both ends and
// nothing set in their QUIC configurations, HTTP datagrams travel in real
// QUIC DATAGRAM frames (RFC 9297 section 2.1 over RFC 9221).
func TestExtendedConnectQUICDatagrams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newMemEnv(t, &Server{Handler: echoTunnel(t, nil), EnableExtendedConnect: true, EnableDatagrams: true})
		tr := e.transport()
		tr.EnableDatagrams = true
		resp, s, err := tr.ExtendedConnect(context.Background(), connectRequest())
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("ExtendedConnect: %v, %v", resp, err)
		}
		defer s.Close()
		for i := range 20 {
			msg := []byte{'q', byte('a' + i)}
			if err := s.SendDatagram(msg); err != nil {
				t.Fatalf("SendDatagram: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			b, err := s.ReceiveDatagram(ctx)
			cancel()
			if err != nil || string(b) != "re:"+string(msg) {
				t.Fatalf("datagram %d back %q, %v", i, b, err)
			}
		}
	})
}
