package main

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// FuzzParseALPN: --alpn gives known protocols without repeats, or a
// usage error; never a panic.
func FuzzParseALPN(f *testing.F) {
	for _, s := range []string{"h3", "hq-interop", "h3,hq-interop", " hq-interop , h3", "h3,h3", "", ",", "h2", "h3,\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		protos, err := parseALPN(s)
		if err != nil {
			if !errors.Is(err, errUsage) {
				t.Fatalf("%q: error not a usage error: %v", s, err)
			}
			return
		}
		if len(protos) == 0 || len(protos) > len(knownALPNs) {
			t.Fatalf("%q: %q", s, protos)
		}
		seen := map[string]bool{}
		for _, p := range protos {
			if seen[p] || (p != "h3" && p != "hq-interop") {
				t.Fatalf("%q: %q", s, protos)
			}
			seen[p] = true
		}
	})
}

// FuzzParseGetURLs: get's URL arguments give one server and request
// paths, or a usage error; never a panic.
func FuzzParseGetURLs(f *testing.F) {
	for _, s := range []string{
		"https://localhost:4433/big.bin",
		"https://[::1]:4433/a b?x=1#frag",
		"https://h/",
		"https://h",
		"http://h/x",
		"https://:1/x",
		"https://h:1/x\nhttps://h:2/y",
		"https://h:1/x\nhttps://h:1/%zz",
		"\x7f",
		"https://]",
		"https://a]b:1/x",
		"https://h:0/x",
		"https://h:99999/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		server, files, err := parseGetURLs(strings.Split(s, "\n"))
		if err != nil {
			if !errors.Is(err, errUsage) {
				t.Fatalf("%q: error not a usage error: %v", s, err)
			}
			return
		}
		host, port, err := net.SplitHostPort(server)
		if err != nil {
			t.Fatalf("%q: server %q: %v", s, server, err)
		}
		if checkHostPort(host, port) != nil {
			t.Fatalf("%q: server %q accepted", s, server)
		}
		for _, f := range files {
			if !strings.HasPrefix(f.path, "/") {
				t.Fatalf("%q: path %q", s, f.path)
			}
		}
	})
}
