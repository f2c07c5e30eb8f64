package http3

import (
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
)

// TestResponseHeaderSnapshot: the header goes out as it was when the
// handler called WriteHeader, whatever the handler changes afterwards;
// the server adds what the header left unset (Content-Type from the
// body's first bytes, Date, the content-length of a body that ended with
// the handler) and drops an invalid Content-Length; the request's
// RemoteAddr is the client's address.
func TestResponseHeaderSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const page = "<html><body>hello</body></html>"
		remote := make(chan string, 4)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			remote <- r.RemoteAddr
			hdr := w.Header()
			hdr.Set("X-Before", "1")
			switch r.URL.Path {
			case "/typed":
				hdr.Set("Content-Type", "text/plain")
				hdr.Set("Date", "Mon, 02 Jan 2006 15:04:05 GMT")
			case "/badlength":
				hdr.Set("Content-Length", "many")
			}
			w.WriteHeader(http.StatusOK)
			hdr.Set("X-After", "1")
			w.Header().Set("X-After-Too", "1")
			_, _ = io.WriteString(w, page)
		})
		e := newMemEnv(t, &Server{Handler: h})
		tr := e.transport()
		for _, c := range []struct{ path, ctype, date string }{
			{"/sniffed", "text/html; charset=utf-8", ""},
			{"/typed", "text/plain", "Mon, 02 Jan 2006 15:04:05 GMT"},
			{"/badlength", "text/html; charset=utf-8", ""},
		} {
			resp, err := tr.RoundTrip(memGet(t, c.path))
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil || string(body) != page {
				t.Fatalf("%s: body %q, %v", c.path, body, err)
			}
			hd := resp.Header
			if hd.Get("X-Before") != "1" || hd.Get("X-After") != "" || hd.Get("X-After-Too") != "" {
				t.Errorf("%s: header %v: want X-Before only of the handler's fields", c.path, hd)
			}
			if got := hd.Get("Content-Type"); got != c.ctype {
				t.Errorf("%s: Content-Type %q, want %q", c.path, got, c.ctype)
			}
			if got := hd.Values("Content-Length"); len(got) != 1 || resp.ContentLength != int64(len(page)) {
				t.Errorf("%s: Content-Length %q (%d), want %d", c.path, got, resp.ContentLength, len(page))
			}
			if got := hd.Get("Date"); got == "" || (c.date != "" && got != c.date) || len(hd.Values("Date")) != 1 {
				t.Errorf("%s: Date %q, want %q", c.path, hd.Values("Date"), c.date)
			}
			addr := <-remote
			if _, _, err := net.SplitHostPort(addr); err != nil {
				t.Errorf("%s: RemoteAddr %q: %v", c.path, addr, err)
			}
		}
	})
}
