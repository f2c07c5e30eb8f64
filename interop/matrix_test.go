//go:build linux

package interop

import (
	"bytes"
	"strings"
	"testing"
)

// TestVerdict checks the exit rule on a made-up matrix: a case quic-go
// passes against itself is required of every satquic cell, one it fails
// is not, and a failure known to lie outside satquic is excused.
func TestVerdict(t *testing.T) {
	cell := func(c, client, server string, st Status, reason string) Result {
		r := Result{Case: c, Client: client, Server: server, Status: st, Reason: reason}
		r.Known = known(r)
		return r
	}
	m := &Matrix{
		Cases:           []string{"handshake", "v2", "zerortt"},
		Implementations: []string{"satquic", "quic-go", "ngtcp2"},
		Results: []Result{
			cell("handshake", "satquic", "satquic", Pass, ""),
			cell("handshake", "quic-go", "quic-go", Pass, ""),
			cell("handshake", "satquic", "ngtcp2", Fail, "client: boom"),
			cell("v2", "quic-go", "quic-go", Unsupported, "no"),
			cell("v2", "satquic", "ngtcp2", Unsupported, "no"),
			cell("zerortt", "quic-go", "quic-go", Pass, ""),
			cell("zerortt", "satquic", "ngtcp2", Fail, "the client sent 10557 bytes in 1-RTT packets, more than 5000, 2170 of them PADDING (the server rejected 0-RTT)"),
		},
	}
	if m.Verdict() || len(m.Required) != 1 || !strings.HasPrefix(m.Required[0], "handshake satquic->ngtcp2") {
		t.Fatalf("verdict %v, required %q", m.OK, m.Required)
	}
	var b bytes.Buffer
	if err := m.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"sq>ng", "fail*", "known, outside satquic: ngtcp2 0.12.1", "Not run:\n  no:\n    v2 qg>qg, v2 sq>ng", "NOT OK: 1 required"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	m.Results[2].Status = Pass
	if !m.Verdict() {
		t.Fatalf("required %q", m.Required)
	}
	// A known cause excuses only its symptom.
	for reason, want := range map[string]bool{
		"client: gtlsclient reported an error: ngtcp2_conn_read_pkt: ERR_DRAINING": true,
		"client: gtlsclient reported an error: boom":                               false,
	} {
		if got := cell("handshakeloss", "ngtcp2", "satquic", Fail, reason).Known != ""; got != want {
			t.Errorf("handshakeloss ngtcp2->satquic %q: known %v, want %v", reason, got, want)
		}
	}
	// ngtcp2's path MTU probes excuse a zerortt failure only when the
	// limit holds without them and the server took the 0-RTT requests.
	for reason, want := range map[string]bool{
		"the client sent 5316 bytes in 1-RTT packets, more than 5000, 4820 of them PADDING, 4178 in 3 path MTU probes, without which the limit holds (the server accepted 0-RTT)": true,
		"the client sent 9316 bytes in 1-RTT packets, more than 5000, 4820 of them PADDING, 4178 in 3 path MTU probes (the server accepted 0-RTT)":                                false,
		"the client sent 5316 bytes in 1-RTT packets, more than 5000, 4820 of them PADDING, 4178 in 3 path MTU probes, without which the limit holds (the server rejected 0-RTT)": false,
		"the client sent 5316 bytes in 1-RTT packets, more than 5000, 4820 of them PADDING (the server accepted 0-RTT)":                                                           false,
	} {
		if got := cell("zerortt", "ngtcp2", "satquic", Fail, reason).Known != ""; got != want {
			t.Errorf("zerortt ngtcp2->satquic %q: known %v, want %v", reason, got, want)
		}
	}
}
