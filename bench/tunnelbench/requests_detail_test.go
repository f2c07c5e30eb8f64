//go:build linux

package tunnelbench

import (
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/emulate"
)

// TestSlowestClassified: the slowest requests come first, each with the
// drops while it ran and the cause they name.
func TestSlowestClassified(t *testing.T) {
	epoch := time.Unix(1000, 0)
	at := func(s float64) time.Time { return epoch.Add(time.Duration(s * float64(time.Second))) }
	var reqs []request
	for i := range 20 {
		reqs = append(reqs, request{flow: i % 5, start: at(float64(i)), took: 50 * time.Millisecond})
	}
	reqs[3].took = 400 * time.Millisecond  // 3.0 to 3.4: an outage
	reqs[7].took = 300 * time.Millisecond  // 7.0 to 7.3: a loss burst
	reqs[11].took = 200 * time.Millisecond // nothing dropped
	drops := []emulate.Drop{
		{AtS: 3.1, Size: 1400, Reason: "outage"}, {AtS: 3.1, Up: true, Size: 80, Reason: "outage"},
		{AtS: 7.2, Size: 1400, Reason: "loss"}, {AtS: 7.2, Up: true, Size: 90, Reason: "loss"},
		{AtS: 12.5, Size: 1400, Reason: "loss"}, // between requests
	}
	slow := slowest(reqs, drops, epoch)
	if len(slow) != 10 {
		t.Fatalf("%d slowest of 20, want 10", len(slow))
	}
	want := []SlowRequest{
		{Flow: 3, StartS: 3, TimeS: 0.4, Cause: "outage", OutageDrops: 2, SmallDrops: 1},
		{Flow: 2, StartS: 7, TimeS: 0.3, Cause: "loss", LossUp: 1, LossDown: 1, SmallDrops: 1},
		{Flow: 1, StartS: 11, TimeS: 0.2, Cause: "none"},
	}
	for i, w := range want {
		if slow[i] != w {
			t.Errorf("slowest %d: %+v, want %+v", i, slow[i], w)
		}
	}
	if c := tailCauses(slow); c["outage"] != 1 || c["loss"] != 1 || c["none"] != 8 {
		t.Errorf("causes %v, want 1 outage, 1 loss, 8 none", c)
	}
}

// TestInnerTCPParse: the counters are found in the snmp and netstat
// layouts, and a value line that does not match its header is an error.
func TestInnerTCPParse(t *testing.T) {
	var c InnerTCP
	snmp := "Ip: Forwarding DefaultTTL\nIp: 1 64\nTcp: RtoMin OutSegs RetransSegs\nTcp: 200 1000 7\n"
	netstat := "TcpExt: SyncookiesSent TCPTimeouts TCPLossProbes TCPSynRetrans TCPFastRetrans TCPSpuriousRTOs\n" +
		"TcpExt: 0 2 5 1 9 3\nIpExt: InNoRoutes\nIpExt: 0\n"
	for _, f := range []string{snmp, netstat} {
		if err := c.parse(strings.NewReader(f)); err != nil {
			t.Fatal(err)
		}
	}
	want := InnerTCP{RetransSegs: 7, Timeouts: 2, LossProbes: 5, SynRetrans: 1, FastRetrans: 9, SpuriousRTOs: 3}
	if c != want {
		t.Errorf("parsed %+v, want %+v", c, want)
	}
	for _, bad := range []string{"Tcp: RetransSegs OutSegs\nTcp: 1\n", "Tcp: RetransSegs\nTcp: x\n"} {
		if err := new(InnerTCP).parse(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

const innerTCPSeed = "Tcp: RtoMin OutSegs RetransSegs\nTcp: 200 1000 7\nTcpExt: TCPTimeouts TCPLossProbes\nTcpExt: 2 5\n"

// TestInnerTCPParseTruncated: every prefix of a valid file parses or
// gives an error, never a panic.
func TestInnerTCPParseTruncated(t *testing.T) {
	for n := range len(innerTCPSeed) {
		_ = new(InnerTCP).parse(strings.NewReader(innerTCPSeed[:n]))
	}
}

func FuzzInnerTCPParse(f *testing.F) {
	f.Add(innerTCPSeed)
	f.Add("Tcp: RetransSegs\nTcp: 18446744073709551616\n")
	f.Add("TcpExt:\nTcpExt:\n")
	f.Fuzz(func(t *testing.T, s string) {
		_ = new(InnerTCP).parse(strings.NewReader(s))
	})
}
