package connectip

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
)

func TestScopePath(t *testing.T) {
	cases := []struct {
		path  string
		scope Scope
	}{
		{WellKnownPath + "*/*/", AnyScope},
		{WellKnownPath + "2001%3Adb8%3A%3A42/17/", Scope{Prefix: mustPrefix("2001:db8::42/128"), Protocol: 17}},
		{WellKnownPath + "2001%3Adb8%3A%3A%2F32/*/", Scope{Prefix: mustPrefix("2001:db8::/32"), Protocol: AnyProtocol}},
		{WellKnownPath + "192.0.2.0%2F24/0/", Scope{Prefix: mustPrefix("192.0.2.0/24"), Protocol: 0}},
		{WellKnownPath + "target.example.com/132/", Scope{Host: "target.example.com", Protocol: 132}},
	}
	for _, c := range cases {
		got, err := ParseScopePath(c.path)
		if err != nil || got != c.scope {
			t.Errorf("%s: %+v, %v", c.path, got, err)
		}
		if got.Path() != c.path {
			t.Errorf("%+v builds %s, want %s", c.scope, got.Path(), c.path)
		}
	}
	for _, p := range []string{WellKnownPath + "//", WellKnownPath + "%2A/%2A/", WellKnownPath + "%2a/*/"} {
		if s, err := ParseScopePath(p); err != nil || s != AnyScope {
			t.Errorf("%s: %+v %v", p, s, err)
		}
	}
	for _, bad := range []string{
		"/vpn", WellKnownPath + "*/*", WellKnownPath + "*/256/", WellKnownPath + "*/1x/",
		WellKnownPath + "192.0.2.1%2F24/*/", WellKnownPath + "192.0.2.0%2F33/*/",
		WellKnownPath + "fe80%3A%3A1%25eth0/*/", WellKnownPath + "a_b/*/", WellKnownPath + "*/*/extra/",
	} {
		if _, err := ParseScopePath(bad); err == nil {
			t.Errorf("%s was accepted", bad)
		}
	}
}

func TestCheckToken(t *testing.T) {
	r := httptest.NewRequest(http.MethodConnect, "https://proxy.example/", nil)
	if CheckToken(r, "s3cret") {
		t.Fatal("no header accepted")
	}
	for header, want := range map[string]bool{
		"Bearer s3cret": true, "bearer s3cret": true, "Bearer s3cre": false, "Bearer s3cret2": false,
		"Basic s3cret": false, "s3cret": false, "Bearer ": false,
	} {
		r.Header.Set("Authorization", header)
		if got := CheckToken(r, "s3cret"); got != want {
			t.Errorf("%q: %v", header, got)
		}
	}
	r.Header.Set("Authorization", "Bearer ")
	if CheckToken(r, "") {
		t.Fatal("an empty token accepted")
	}
}

func TestClientCertificate(t *testing.T) {
	r := httptest.NewRequest(http.MethodConnect, "https://proxy.example/", nil)
	if _, ok := ClientCertificate(r); ok {
		t.Fatal("a request without TLS has a certificate")
	}
	cert := &x509.Certificate{}
	r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}
	if got, ok := ClientCertificate(r); !ok || got != cert {
		t.Fatal("the verified certificate was not returned")
	}
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{cert}}
	if _, ok := ClientCertificate(r); ok {
		t.Fatal("an unverified certificate was returned")
	}
}

func TestAddressPool(t *testing.T) {
	pool, err := NewAddressPool(mustPrefix("10.9.0.0/30"), mustPrefix("2001:db8::/126"))
	if err != nil {
		t.Fatal(err)
	}
	any4 := netip.IPv4Unspecified()
	var got []netip.Prefix
	for range 3 {
		p, err := pool.Allocate(any4)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	want := []netip.Prefix{mustPrefix("10.9.0.1/32"), mustPrefix("10.9.0.2/32"), mustPrefix("10.9.0.3/32")}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("allocated %v, want %v", got, want)
		}
	}
	if _, err := pool.Allocate(any4); err == nil {
		t.Fatal("a full pool allocated")
	}
	pool.Release(got[1])
	if p, err := pool.Allocate(any4); err != nil || p != got[1] {
		t.Fatalf("after a release: %v %v", p, err)
	}
	if p, err := pool.Allocate(netip.MustParseAddr("2001:db8::2")); err != nil || p != mustPrefix("2001:db8::2/128") {
		t.Fatalf("preferred address: %v %v", p, err)
	}
	if p, err := pool.Allocate(netip.MustParseAddr("2001:db8::2")); err != nil || p == mustPrefix("2001:db8::2/128") {
		t.Fatalf("a taken preferred address: %v %v", p, err)
	}
	if pool.InUse() != 5 {
		t.Fatalf("in use: %d", pool.InUse())
	}
	if _, err := NewAddressPool(); err == nil {
		t.Fatal("an empty pool")
	}
	if _, err := NewAddressPool(mustPrefix("10.0.0.1/24")); err == nil {
		t.Fatal("a prefix with host bits")
	}
}
