package http3

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// TestHeaderValuesShareRoom: the values of a header's fields share one
// allocation (regularValues), and a field's second value, appended to
// its capacity-one slice, leaves the next field's value alone; cookies
// are joined.
func TestHeaderValuesShareRoom(t *testing.T) {
	fields := []headerField{
		{Name: ":status", Value: "200"},
		{Name: "x-a", Value: "1"},
		{Name: "x-b", Value: "2"},
		{Name: "x-a", Value: "3"},
		{Name: "cookie", Value: "a=1"},
		{Name: "x-c", Value: "4"},
		{Name: "cookie", Value: "b=2"},
	}
	status, h, err := parseResponseFields(fields)
	if err != nil || status != 200 {
		t.Fatalf("status %d, %v", status, err)
	}
	want := http.Header{"X-A": {"1", "3"}, "X-B": {"2"}, "Cookie": {"a=1; b=2"}, "X-C": {"4"}}
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("header %v, want %v", h, want)
	}
	h["X-A"] = append(h["X-A"], "5")
	if h.Get("X-B") != "2" || h.Get("Cookie") != "a=1; b=2" {
		t.Errorf("appending to X-A changed the others: %v", h)
	}
	var inline [3]string
	if _, h, err := parseResponseFieldsIn(fields, inline[:]); err != nil || !reflect.DeepEqual(h, want) {
		t.Fatalf("with inline room too small: %v, %v", h, err)
	}
	if inline != [3]string{} {
		t.Errorf("5 values in a room of 3: %q", inline)
	}
	small := []headerField{{Name: ":status", Value: "204"}, {Name: "x-a", Value: "1"}, {Name: "x-b", Value: "2"}}
	if _, h, err := parseResponseFieldsIn(small, inline[:]); err != nil || &h["X-B"][0] != &inline[1] {
		t.Errorf("2 values in a room of 3: %v, %v", h, err)
	}
	if got := regularValues(fields[:1]); got != nil {
		t.Errorf("room for a header of pseudo-headers only: %v", got)
	}
}

// TestRequestValuesInline: a request's first values take their room in
// its requestFields rather than on the heap, a repeated field's second
// value leaves the next field's alone, and a request with more values
// than the room holds gets them all.
func TestRequestValuesInline(t *testing.T) {
	pseudo := []headerField{
		{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: "https"},
		{Name: ":authority", Value: "example.com"}, {Name: ":path", Value: "/"},
	}
	fields := append(append([]headerField(nil), pseudo...),
		headerField{Name: "x-a", Value: "1"}, headerField{Name: "x-b", Value: "2"},
		headerField{Name: "x-a", Value: "3"})
	var rf requestFields
	if err := parseRequestFields(fields, &rf); err != nil {
		t.Fatal(err)
	}
	// X-A's second value moved it out of the room; X-B stays.
	if &rf.header["X-B"][0] != &rf.values[1] || rf.values[0] != "1" {
		t.Errorf("values not in the request's room: %v", rf.header)
	}
	rf.header["X-B"] = append(rf.header["X-B"], "4")
	want := http.Header{"X-A": {"1", "3"}, "X-B": {"2", "4"}}
	if !reflect.DeepEqual(rf.header, want) {
		t.Fatalf("header %v, want %v", rf.header, want)
	}

	many := append([]headerField(nil), pseudo...)
	for i := range requestValuesInline + 1 {
		many = append(many, headerField{Name: "x-" + string(rune('a'+i)), Value: strings.Repeat("v", i+1)})
	}
	var big requestFields
	if err := parseRequestFields(many, &big); err != nil {
		t.Fatal(err)
	}
	if len(big.header) != requestValuesInline+1 || big.header.Get("X-A") != "v" || big.values[0] != "" {
		t.Errorf("%d values: header %v, room %q", requestValuesInline+1, big.header, big.values)
	}
}

// TestAuthority: a URL host is the connections' key in its
// host:port form, with the scheme's port when it names none.
func TestAuthority(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"example.com", "example.com:443"},
		{"example.com:8443", "example.com:8443"},
		{"127.0.0.1:4433", "127.0.0.1:4433"},
		{"[::1]:4433", "[::1]:4433"},
		{"[::1]", "[::1]:443"},
		{"[example.com]:443", "example.com:443"},
	} {
		if got := authority(c.in, "443"); got != c.want {
			t.Errorf("authority(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestTokens: field names are lowercase tokens, methods and upgrade
// tokens tokens of any case (RFC 9110 section 5.6.2), and every octet
// outside the token set, non-ASCII included, fails both.
func TestTokens(t *testing.T) {
	const special = "!#$%&'*+-.^_`|~"
	for c := 0; c < 256; c++ {
		s := string([]byte{'a', byte(c)})
		lower := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(special, byte(c)) >= 0
		upper := c >= 'A' && c <= 'Z'
		if validFieldName(s) != lower {
			t.Errorf("validFieldName(%q) = %v", s, !lower)
		}
		if validToken(s) != (lower || upper) {
			t.Errorf("validToken(%q) = %v", s, !(lower || upper))
		}
	}
	if validFieldName("") || validToken("") {
		t.Error("the empty string is a token")
	}
	if !validToken("GET") || !validToken("connect-udp") || validToken("G ET") || validToken("\u212a") {
		t.Error("methods and upgrade tokens")
	}
}

// requestPaths are :path values of every kind parseRequestPath meets.
var requestPaths = []string{
	"/", "/bytes/1024", "/a?b", "/a?b?c", "/a?", "/a?b c", "/a%20b", "/a b", "//x/y",
	"/caf\xc3\xa9", "*", "", "a/b", "/a!b", "/$&+,;=:@-_.~", "/?q=1&r=2", "/a#frag", "/a?\x7f",
}

// TestParseRequestPath: the paths parsed without url.ParseRequestURI
// come out as it parses them, and the others go to it.
func TestParseRequestPath(t *testing.T) {
	plain := 0
	for _, p := range requestPaths {
		checkRequestPath(t, p)
		var room url.URL
		if u, err := parseRequestPath(p, &room); err == nil && u == &room {
			plain++
		}
	}
	if plain < 5 {
		t.Errorf("%d paths parsed in place, want the usual ones", plain)
	}
}

func checkRequestPath(t *testing.T, p string) {
	t.Helper()
	var room url.URL
	got, err := parseRequestPath(p, &room)
	want, wantErr := url.ParseRequestURI(p)
	if (err == nil) != (wantErr == nil) || err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: parsed %#v, %v; url.ParseRequestURI %#v, %v", p, got, err, want, wantErr)
	}
}

// FuzzRequestPath holds parseRequestPath equal to url.ParseRequestURI.
func FuzzRequestPath(f *testing.F) {
	for _, p := range requestPaths {
		f.Add(p)
	}
	f.Fuzz(checkRequestPath)
}

// TestCanonicalName: the table of common names gives what
// http.CanonicalHeaderKey gives, and other names go to it.
func TestCanonicalName(t *testing.T) {
	names := []string{"x-custom", "www-authenticate", "content-md5", "a", "x--y"}
	for n := range canonicalNames {
		names = append(names, n)
	}
	for _, n := range names {
		if got, want := canonicalName(n), http.CanonicalHeaderKey(n); got != want {
			t.Errorf("canonicalName(%q) = %q, want %q", n, got, want)
		}
	}
}

// TestFieldWriterKeepsLines: a fieldWriter that reuses the encodings of
// the field lines it wrote last writes what appendFieldLine writes, over
// messages whose fields repeat, change and outnumber what it keeps.
func TestFieldWriterKeepsLines(t *testing.T) {
	names := []string{":authority", ":path", "content-type", "content-length", "date", "x-custom", "cookie", "authorization"}
	values := []string{"", "1024", "example.com:443", "/bytes/1024", "text/plain", strings.Repeat("v", maxEncodedValue+1), "Sat, 28 Nov 2026 07:00:00 GMT"}
	rng := rand.New(rand.NewPCG(1, 2))
	w := getFieldWriter()
	defer putFieldWriter(w)
	for msg := range 200 {
		w.buf = appendFieldSectionPrefix(w.buf[:0])
		want := appendFieldSectionPrefix(nil)
		for range 1 + rng.IntN(12) {
			name, value := names[rng.IntN(len(names))], values[rng.IntN(len(values))]
			w.field(name, value)
			want = appendFieldLine(want, name, value)
		}
		if !bytes.Equal(w.buf, want) {
			t.Fatalf("message %d: %x, want %x", msg, w.buf, want)
		}
	}
	for _, l := range w.lines {
		if isSecretField(l.name) {
			t.Errorf("kept the encoding of %s", l.name)
		}
	}
}
