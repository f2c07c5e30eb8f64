//go:build linux

package interop

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Tests are what an endpoint is asked to do, as the interop runner names
// them in its TESTCASE variable: several cases ask the same of an
// endpoint and differ only in the link or in what they check.
const (
	testHandshake    = "handshake"
	testTransfer     = "transfer"
	testRetry        = "retry"
	testResumption   = "resumption"
	testZeroRTT      = "zerortt"
	testHTTP3        = "http3"
	testMulticonnect = "multiconnect"
	testChaCha20     = "chacha20"
	testKeyUpdate    = "keyupdate"
	testECN          = "ecn"
	testV2           = "v2"
	// testMigrate asks a client to move its connection to a new socket
	// during the transfer (RFC 9000 section 9.2). The runner's
	// connectionmigration asks the server instead ("connectionmigration")
	// to offer a preferred address (section 9.6) that the client moves
	// to; here the tap in front of the server would not see that
	// address, so the client moves by itself, which the runner's checks
	// judge the same way.
	testMigrate = "migrate"
)

// Case is one test case of the QUIC interop runner
// (quic-interop-runner's testcases_quic.py), reproduced: the files the
// client fetches, the link between the two, what each endpoint is asked to
// do, and what must hold afterwards.
type Case struct {
	Name string
	// Abbrev is the runner's one- or two-letter name, for narrow tables.
	Abbrev string
	Desc   string
	// ClientTest and ServerTest are the tests the endpoints run.
	ClientTest, ServerTest string
	// Files are the sizes of the files served and requested; NameLen
	// the length of their random names (the runner's default is 10).
	Files   []int
	NameLen int
	// Link is the scenario of the runner's network simulator.
	Link scenario
	// Timeout bounds the client's run (the runner's, which includes
	// starting containers: generous for a process).
	Timeout time.Duration
	// IPv6 runs the case over ::1.
	IPv6 bool
	// CertChain is how many certificates the server sends (leaf and
	// intermediates): 9 in amplificationlimit, 1 otherwise.
	CertChain int
	// NotYet, when set, says why satquic cannot run the case at all.
	NotYet string

	check func(*outcome) []string
}

// runnerTimeout is the interop runner's default time bound of a test.
const runnerTimeout = 60 * time.Second

func sizes(n, size int) []int { return slices.Repeat([]int{size}, n) }

const (
	kB = 1 << 10
	mB = 1 << 20
)

// cases are the runner's test cases in its order.
var cases = []*Case{
	{Name: "handshake", Abbrev: "H", Desc: "Handshake completes successfully.",
		ClientTest: testHandshake, ServerTest: testHandshake, Files: []int{1 * kB}, check: checkHandshake},
	{Name: "transfer", Abbrev: "DC", Desc: "Stream data is being sent and received correctly. Connection close completes with a zero error code.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{2 * mB, 3 * mB, 5 * mB}, check: checkTransfer},
	{Name: "longrtt", Abbrev: "LR", Desc: "Handshake completes when RTT is long.",
		ClientTest: testHandshake, ServerTest: testHandshake, Files: []int{1 * kB}, Link: scenario{Delay: 750 * time.Millisecond},
		check: checkLongRTT},
	{Name: "chacha20", Abbrev: "C20", Desc: "Handshake completes using ChaCha20.",
		ClientTest: testChaCha20, ServerTest: testChaCha20, Files: []int{3 * mB}, check: checkChaCha20},
	{Name: "multiplexing", Abbrev: "M", Desc: "Thousands of files are transferred over a single connection, and server increased stream limits to accomodate client requests.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: sizes(1999, 32), check: checkMultiplexing},
	{Name: "retry", Abbrev: "S", Desc: "Server sends a Retry, and a subsequent connection using the Retry token completes successfully.",
		ClientTest: testRetry, ServerTest: testRetry, Files: []int{10 * kB}, check: checkRetry},
	{Name: "resumption", Abbrev: "R", Desc: "Connection is established using TLS Session Resumption.",
		ClientTest: testResumption, ServerTest: testResumption, Files: []int{5 * kB, 10 * kB}, check: checkResumption},
	{Name: "zerortt", Abbrev: "Z", Desc: "0-RTT data is being sent and acted on.",
		ClientTest: testZeroRTT, ServerTest: testZeroRTT, Files: sizes(zeroRTTFiles, 32), NameLen: zeroRTTNameLen, check: checkZeroRTT},
	{Name: "http3", Abbrev: "3", Desc: "An H3 transaction succeeded.",
		ClientTest: testHTTP3, ServerTest: testHTTP3, Files: []int{5 * kB, 10 * kB, 500 * kB}, check: checkTransfer},
	{Name: "blackhole", Abbrev: "B", Desc: "Transfer succeeds despite underlying network blacking out for a few seconds.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{10 * mB},
		Link: scenario{BlackholeOn: 5 * time.Second, BlackholeOff: 2 * time.Second}, check: checkTransfer},
	{Name: "keyupdate", Abbrev: "U", Desc: "One of the two endpoints updates keys and the peer responds correctly.",
		ClientTest: testKeyUpdate, ServerTest: testTransfer, Files: []int{3 * mB}, check: checkKeyUpdate},
	{Name: "ecn", Abbrev: "E", Desc: "Endpoints mark their packets ECT(0) or ECT(1) and report the marks they receive in ACK frames.",
		ClientTest: testECN, ServerTest: testECN, Files: []int{100 * kB}, Link: scenario{Namespaces: true}, check: checkECN},
	{Name: "amplificationlimit", Abbrev: "A", Desc: "The server obeys the 3x amplification limit.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{5 * kB}, CertChain: 9,
		Link: scenario{DropsToServer: "drop:1-6"}, check: checkAmplification},
	{Name: "handshakeloss", Abbrev: "L1", Desc: "Handshake completes under extreme packet loss.",
		ClientTest: testMulticonnect, ServerTest: testMulticonnect, Files: sizes(multiconnectFiles, 1*kB),
		Link: scenario{Loss: "burst:0.3,3"}, Timeout: 300 * time.Second, check: checkMulticonnect},
	{Name: "transferloss", Abbrev: "L2", Desc: "Transfer completes under moderate packet loss.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{2 * mB},
		Link: scenario{Loss: "burst:0.02,3"}, check: checkTransfer},
	{Name: "handshakecorruption", Abbrev: "C1", Desc: "Handshake completes under extreme packet corruption.",
		ClientTest: testMulticonnect, ServerTest: testMulticonnect, Files: sizes(multiconnectFiles, 1*kB),
		Link: scenario{Corrupt: 0.3}, Timeout: 300 * time.Second, check: checkMulticonnect},
	{Name: "transfercorruption", Abbrev: "C2", Desc: "Transfer completes under moderate packet corruption.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{2 * mB},
		Link: scenario{Corrupt: 0.02}, check: checkTransfer},
	{Name: "ipv6", Abbrev: "6", Desc: "A transfer across an IPv6-only network succeeded.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{5 * kB, 10 * kB}, IPv6: true, check: checkIPv6},
	{Name: "v2", Abbrev: "V2", Desc: "Server should select QUIC v2 in compatible version negotiation.",
		ClientTest: testV2, ServerTest: testV2, Files: []int{1 * kB}, check: checkV2},
	{Name: "rebind-port", Abbrev: "BP", Desc: "Transfer completes under frequent port rebindings on the client side.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{10 * mB},
		Link: scenario{Rebind: runnerRebind}, check: checkRebindPort},
	{Name: "rebind-addr", Abbrev: "BA", Desc: "Transfer completes under frequent IP address and port rebindings on the client side.",
		ClientTest: testTransfer, ServerTest: testTransfer, Files: []int{10 * mB},
		Link: scenario{Rebind: rebinding{First: runnerRebind.First, Every: runnerRebind.Every, Addr: true}}, check: checkRebindAddr},
	{Name: "connectionmigration", Abbrev: "CM", Desc: "A transfer succeeded during which the client performed an active migration.",
		ClientTest: testMigrate, ServerTest: testTransfer, Files: []int{2 * mB}, check: checkConnectionMigration},
}

// The runner's counts: zerortt fetches 40 files of 32 bytes with names of
// 250 characters, so that the requests fill several 0-RTT packets;
// handshakeloss and handshakecorruption open 50 connections.
const (
	zeroRTTFiles      = 40
	zeroRTTNameLen    = 250
	multiconnectFiles = 50
)

// Cases returns the test cases, in the runner's order.
func Cases() []*Case { return slices.Clone(cases) }

// LookupCases parses a comma-separated list of case names ("all" for
// every case).
func LookupCases(list string) ([]*Case, error) {
	if list == "" || list == "all" {
		return Cases(), nil
	}
	var out []*Case
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(cases, func(c *Case) bool { return c.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown case %q (known: %s)", name, strings.Join(caseNames(), ", "))
		}
		if !slices.Contains(out, cases[i]) {
			out = append(out, cases[i])
		}
	}
	return out, nil
}

func caseNames() []string {
	out := make([]string, len(cases))
	for i, c := range cases {
		out[i] = c.Name
	}
	return out
}

func (c *Case) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return runnerTimeout
}

func (c *Case) nameLen() int {
	if c.NameLen > 0 {
		return c.NameLen
	}
	return 10
}
