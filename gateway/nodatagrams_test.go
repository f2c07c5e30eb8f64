package gateway

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/testkit"
)

// TestClientWithoutDatagramsRefused: a client that did not enable HTTP
// datagrams (no SETTINGS_H3_DATAGRAM, no QUIC DATAGRAM frames) cannot
// carry the tunnel's packets: its CONNECT-IP request is answered 400 and
// counted, and holds no address of the pool.
func TestClientWithoutDatagramsRefused(t *testing.T) {
	g := startServer(t, ServerConfig{Token: testToken})
	tr := &http3.Transport{TLSClientConfig: testkit.ClientTLS("localhost")}
	defer tr.Close()
	u, err := url.Parse(g.url + connectip.WellKnownPath + "*/*/")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req := &http.Request{Method: http.MethodConnect, Proto: "connect-ip", URL: u, Host: u.Host, Header: http.Header{
		http3.CapsuleProtocolHeader: {http3.CapsuleProtocolValue},
		"Authorization":             {"Bearer " + testToken},
	}}
	resp, s, err := tr.ExtendedConnect(ctx, req)
	if err != nil {
		t.Fatalf("ExtendedConnect: %v", err)
	}
	if s != nil {
		_ = s.Close()
	}
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", resp.StatusCode)
	}
	st := g.srv.Stats()
	if st.NoDatagrams != 1 || st.Clients != 0 {
		t.Errorf("no_datagrams %d, clients %d; want 1 and 0", st.NoDatagrams, st.Clients)
	}
	// The pool's address went back: a client with datagrams gets the
	// first one.
	ct, err := g.dial(t, testToken)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	if got := ct.Prefixes[0].Addr(); got != testPool.Addr().Next().Next() {
		t.Errorf("the next client got %v, want %v", got, testPool.Addr().Next().Next())
	}
}
