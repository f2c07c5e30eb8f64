package hq

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/netsim/memnet"
	"github.com/satquic/satquic/quic"
)

func TestReadRequest(t *testing.T) {
	for _, tc := range []struct {
		in, path string
		ok       bool
	}{
		{"GET /index.html\r\n", "/index.html", true},
		{"GET /a/b/c\n", "/a/b/c", true},
		{"GET /no-newline", "/no-newline", true},
		{"GET /a//b/./c\r\n", "/a/b/c", true},
		{"GET /\r\n", "/", true},
		{"GET /../etc/passwd\r\n", "", false},
		{"GET /a/../../b\r\n", "", false},
		{"GET relative\r\n", "", false},
		{"POST /x\r\n", "", false},
		{"GET /nul\x00\r\n", "", false},
		{"", "", false},
		{"GET /" + strings.Repeat("a", MaxRequestLen+10), "", false},
		{"GET / /\r\n", "", false},
		{"GET /a b\r\n", "", false},
		{"GET /x \r\n", "/x", true},
		{"GET /a%20b.txt\r\n", "/a b.txt", true},
		{"GET /dir/file.bin?x=1\r\n", "/dir/file.bin", true},
		{"GET /%2e%2e/etc/passwd\r\n", "", false},
		{"GET /a%2F..%2Fb\r\n", "", false},
		{"GET /bad%zz\r\n", "", false},
		{"GET /nul%00\r\n", "", false},
	} {
		p, err := ReadRequest(strings.NewReader(tc.in))
		if tc.ok && (err != nil || p != tc.path) {
			t.Errorf("%q: %q, %v; want %q", tc.in, p, err, tc.path)
		}
		if !tc.ok && !errors.Is(err, ErrBadRequest) {
			t.Errorf("%q: %q, %v; want ErrBadRequest", tc.in, p, err)
		}
	}
	var b bytes.Buffer
	if err := WriteRequest(&b, "/x/y"); err != nil || b.String() != "GET /x/y\r\n" {
		t.Errorf("WriteRequest: %q, %v", b.String(), err)
	}
	if err := WriteRequest(&b, "x"); err == nil {
		t.Error("WriteRequest accepted a relative path")
	}
}

func TestPin(t *testing.T) {
	cert, err := SelfSigned([]string{"localhost", "127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	fp := Fingerprint(cert.Certificate[0])
	colons := strings.ToUpper(fp[:2]) + ":" + fp[2:]
	pin, err := ParsePin(colons)
	if err != nil || pin != fp {
		t.Fatalf("ParsePin(%q) = %q, %v", colons, pin, err)
	}
	if err := VerifyPin(pin)(cert.Certificate, nil); err != nil {
		t.Errorf("pinned certificate refused: %v", err)
	}
	other, _ := SelfSigned([]string{"localhost"}, time.Now())
	if err := VerifyPin(pin)(other.Certificate, nil); !errors.Is(err, ErrPinMismatch) {
		t.Errorf("other certificate: %v", err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 64)} {
		if _, err := ParsePin(bad); err == nil {
			t.Errorf("ParsePin(%q) accepted", bad)
		}
	}
	if len(cert.Leaf.IPAddresses) != 1 || len(cert.Leaf.DNSNames) != 1 {
		t.Errorf("certificate names: %v %v", cert.Leaf.DNSNames, cert.Leaf.IPAddresses)
	}
}

// TestServeAndGet runs a Server and Get over memnet in virtual time.
func TestServeAndGet(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	must(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	content := bytes.Repeat([]byte("satellite "), 100_000)
	must(t, os.WriteFile(filepath.Join(root, "sub", "file.bin"), content, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("secret"), 0o644))
	must(t, os.Symlink(filepath.Join(dir, "secret"), filepath.Join(root, "escape")))
	must(t, os.Symlink("sub/file.bin", filepath.Join(root, "inside")))
	must(t, os.WriteFile(filepath.Join(root, "small"), []byte("small"), 0o644))
	r, err := os.OpenRoot(root)
	must(t, err)
	defer r.Close()

	synctest.Test(t, func(t *testing.T) {
		n := memnet.New(memnet.Config{Seed: 1})
		defer n.Close()
		ca, sa := netip.MustParseAddrPort("10.0.0.1:1000"), netip.MustParseAddrPort("10.0.0.2:443")
		link := netsim.LinkConfig{RateBps: 50e6, Delay: 25 * time.Millisecond}
		_, err := n.AddPath(ca.Addr(), sa.Addr(), link, link)
		must(t, err)
		spc, _ := n.Listen(sa)
		cpc, _ := n.Listen(ca)
		cert, err := SelfSigned([]string{"10.0.0.2"}, time.Now())
		must(t, err)
		l, err := quic.Listen(spc, &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{ALPN}}, nil)
		must(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		srv := &Server{Root: r}
		go func() { done <- srv.Serve(ctx, l) }()

		pin := Fingerprint(cert.Certificate[0])
		ctls := &tls.Config{NextProtos: []string{ALPN}, InsecureSkipVerify: true, VerifyPeerCertificate: VerifyPin(pin)}
		c, err := quic.Dial(ctx, cpc, net.UDPAddrFromAddrPort(sa), ctls, nil)
		must(t, err)

		var got bytes.Buffer
		var last int64
		start := time.Now()
		n1, err := Get(ctx, c, "/sub/file.bin", &got, func(k int64) { last = k })
		if err != nil || !bytes.Equal(got.Bytes(), content) || n1 != int64(len(content)) || last != n1 {
			t.Fatalf("Get: %d bytes (progress %d), %v", n1, last, err)
		}
		// 1 MB at 50 Mbit/s is 0.16 s, plus round trips of slow start.
		if d := time.Since(start); d > time.Second {
			t.Errorf("1 MB took %v", d)
		}
		got.Reset()
		if _, err := Get(ctx, c, "/inside", &got, nil); err != nil || got.Len() != len(content) {
			t.Errorf("symlink inside the root: %d bytes, %v", got.Len(), err)
		}
		for _, p := range []string{"/escape", "/missing", "/sub", "/"} {
			if _, err := Get(ctx, c, p, &got, nil); !errors.Is(err, ErrNotFound) {
				t.Errorf("GET %s: %v, want ErrNotFound", p, err)
			}
		}
		// A request the server refuses outright.
		st, _ := c.OpenStreamSync(ctx)
		_, _ = st.Write([]byte("GET /../secret\r\n"))
		_ = st.Close()
		_, err = st.Read(make([]byte, 10))
		var se *quic.StreamError
		if !errors.As(err, &se) || se.ErrorCode != CodeBadRequest {
			t.Errorf("traversal: %v", err)
		}
		// Far more requests than the server's stream limit (100): each
		// finished stream must free its place, also when the request's
		// FIN comes only after the response.
		for i := range 250 {
			st, err := c.OpenStreamSync(ctx)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			_ = WriteRequest(st, "/small")
			if i%2 == 0 {
				_ = st.Close()
			}
			b, err := io.ReadAll(st)
			if err != nil || string(b) != "small" {
				t.Fatalf("request %d: %q, %v", i, b, err)
			}
			_ = st.Close()
		}
		_ = c.CloseWithError(0, "")
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		_ = l.Close()
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
