package payload

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path, query string
		want        int64
		ok          bool
	}{
		{"/bytes/0", "", 0, true},
		{"/bytes/30", "", 30, true},
		{"/bytes/10240", "", 10240, true},
		{"/bytes", "n=77", 77, true},
		{"/bytes/1099511627776", "", MaxSize, true},
		{"/bytes/1099511627777", "", 0, false},
		{"/bytes/", "", 0, false},
		{"/bytes/-1", "", 0, false},
		{"/bytes/+1", "", 0, false},
		{"/bytes/1e3", "", 0, false},
		{"/bytes/12/", "", 0, false},
		{"/bytes/99999999999999999999", "", 0, false},
		{"/", "", 0, false},
		{"/bytes", "", 0, false},
		{"/bytes", "m=3", 0, false},
		{"/other/3", "", 0, false},
	} {
		got, err := ParsePath(tc.path, tc.query)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParsePath(%q, %q) = %d, %v; want %d, ok %v", tc.path, tc.query, got, err, tc.want, tc.ok)
		}
	}
}

func TestHandler(t *testing.T) {
	h := Handler()
	for _, n := range []int{0, 30, 1024, 70000, 200000} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, Prefix+strconv.Itoa(n), nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %d: status %d", n, rec.Code)
		}
		if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(n) {
			t.Errorf("GET %d: Content-Length %q", n, got)
		}
		if !bytes.Equal(rec.Body.Bytes(), Body(n)) {
			t.Errorf("GET %d: body of %d bytes differs from Body", n, rec.Body.Len())
		}
	}
	// Body repeats a block that is not all one byte.
	if b := Body(3 << 16); bytes.Equal(b[:100], b[100:200]) || !bytes.Equal(b[:1000], b[len(block):len(block)+1000]) {
		t.Error("Body does not repeat its random block")
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, Prefix+"99", nil))
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") != "99" {
		t.Errorf("HEAD: status %d, %d body bytes, length %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/nothing", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /nothing: status %d, want 404", rec.Code)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, Prefix+"3", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: status %d, want 405", rec.Code)
	}
}

func TestHandlerQueryForm(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/bytes?n=5000")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(b, Body(5000)) {
		t.Fatalf("GET /bytes?n=5000: %d bytes, %v", len(b), err)
	}
}

func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"/bytes/1", "/bytes/", "/bytes/0001", "/bytes/1099511627776", "/bytes"} {
		f.Add(s, "")
	}
	f.Add("/bytes", "n=12")
	f.Fuzz(func(t *testing.T, path, query string) {
		n, err := ParsePath(path, query)
		if err != nil {
			return
		}
		if n < 0 || n > MaxSize {
			t.Fatalf("ParsePath(%q, %q) = %d, out of range", path, query, n)
		}
		// An accepted path names its size in decimal.
		form := Prefix + strconv.FormatInt(n, 10)
		if m, err := ParsePath(form, ""); err != nil || m != n {
			t.Fatalf("ParsePath(%q) = %d, %v after ParsePath(%q, %q) = %d", form, m, err, path, query, n)
		}
	})
}
