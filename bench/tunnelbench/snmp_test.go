//go:build linux

package tunnelbench

import (
	"strings"
	"testing"
)

// snmpSample is the Tcp part of a Linux /proc/net/snmp, between others.
const snmpSample = `Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 12345
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors
Tcp: 1 200 120000 -1 10 2 0 0 1 5000 41978 15215 0 3 0
Udp: InDatagrams NoPorts
Udp: 7 0
`

func TestParseSNMP(t *testing.T) {
	c, err := parseSNMP(strings.NewReader(snmpSample))
	if err != nil {
		t.Fatal(err)
	}
	if c.out != 41978 || c.retrans != 15215 {
		t.Errorf("got %+v, want OutSegs 41978 and RetransSegs 15215", c)
	}
	for _, bad := range []string{
		"",
		"Tcp: OutSegs\nTcp: 1\n",                // no RetransSegs
		"Tcp: OutSegs RetransSegs\nTcp: 1 x\n",  // not a number
		"Tcp: OutSegs RetransSegs\nTcp: 1 -2\n", // negative
		"Ip: a b\nIp: 1 2\n",                    // no Tcp lines
		"Tcp: OutSegs RetransSegs\n",            // header only
	} {
		if _, err := parseSNMP(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParseSNMPTruncated: every prefix of a good file parses or fails
// cleanly, and only the prefixes that hold the whole Tcp value line (up
// to the RetransSegs field) give its figures.
func TestParseSNMPTruncated(t *testing.T) {
	for i := range len(snmpSample) {
		c, err := parseSNMP(strings.NewReader(snmpSample[:i]))
		if err == nil && c.out != 41978 {
			t.Errorf("prefix of %d bytes: %+v without an error", i, c)
		}
	}
}

func FuzzParseSNMP(f *testing.F) {
	f.Add(snmpSample)
	f.Add("Tcp: OutSegs RetransSegs\nTcp: 1 2\n")
	f.Add("Tcp:\nTcp:\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseSNMP(strings.NewReader(s))
	})
}
