package gateway

import (
	"bytes"
	"log"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/satquic/satquic/tunnel/tunneltest"
)

// TestRefusalsLoggedSparingly: a flood of unauthenticated requests is
// counted whole but logged at most once a second, so that a client with
// many sockets cannot turn its refusals into as many log lines.
func TestRefusalsLoggedSparingly(t *testing.T) {
	var logged bytes.Buffer
	srv, err := NewServer(tunneltest.NewDevice(1500), ServerConfig{
		Token: testToken, Pool: []netip.Prefix{testPool}, Local: []netip.Addr{testServer},
		ErrorLog: log.New(&logged, "", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 500
	for range n {
		r := httptest.NewRequest(http.MethodConnect, "https://localhost/", nil)
		r.Proto = "connect-ip"
		r.URL = &url.URL{Scheme: "https", Host: "localhost", Path: "/.well-known/masque/ip/*/*/"}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		if w.Code != http.StatusUnauthorized {
			t.Fatalf("status %d, want 401: %s", w.Code, w.Body)
		}
	}
	if st := srv.Stats(); st.Refused != n {
		t.Errorf("%d refusals counted, want %d", st.Refused, n)
	}
	// The loop may cross a second's boundary or two on a slow machine.
	if lines := strings.Count(logged.String(), "\n"); lines < 1 || lines > 3 {
		t.Errorf("%d refusals logged in %d lines, want 1 to 3:\n%s", n, lines, logged.String())
	}
}
