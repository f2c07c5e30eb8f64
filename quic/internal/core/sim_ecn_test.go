package core

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// ecnProfile is p2p (10 Mbit/s, 15 ms each way) with a 64-packet queue on
// the downlink that marks CE above threshold bytes (0: never), and clears
// the ECN field when bleach is set.
func ecnProfile(t *testing.T, threshold int, bleach bool) netsim.Profile {
	p := profile(t, "p2p")
	p.Down.QueuePackets = 64
	p.Down.ECNThreshold = threshold
	p.Down.BleachECN = bleach
	return p
}

// runECNDownload is runDownload with a hook on the pair before it runs.
func runECNDownload(t *testing.T, prof netsim.Profile, size int, ccfg, scfg *Config, setup func(*simPair)) (*simPair, *download) {
	t.Helper()
	d := newDownload(t, size)
	sp := newSimPair(t, prof, 42, ccfg, scfg, nil)
	if setup != nil {
		setup(sp)
	}
	sp.server.app = d.server
	read := d.client(nil)
	sp.client.app = func(now time.Duration, c *Conn) {
		if !d.haveID {
			for _, ev := range sp.client.events {
				if ev.Kind == EventStreamOpened {
					d.clientID, d.haveID = ev.StreamID, true
				}
			}
		}
		read(now, c)
	}
	sp.run(t, func() bool { return d.done }, 60*time.Second)
	if d.got != size {
		t.Fatalf("received %d bytes, want %d", d.got, size)
	}
	return sp, d
}

// The queue marks CE long before it overflows: with ECN the sender backs
// off on the marks and loses nothing, while without ECN the same queue
// fills up and drops (RFC 9002 section 7.1, appendix B.7).
func TestSimECNMarksWithoutLoss(t *testing.T) {
	const size = 4 << 20
	prof := ecnProfile(t, 12*1200, false)
	run := func(disable bool) (*simPair, *download) {
		ccfg, scfg := testConfigs(t, 20)
		ccfg.DisableECN, scfg.DisableECN = disable, disable
		return runECNDownload(t, prof, size, ccfg, scfg, nil)
	}
	sp, d := run(false)
	srv, cli := sp.server.conn.Stats(), sp.client.conn.Stats()
	_, down := sp.path.Stats()
	t.Logf("ECN: %v, server %+v, client %+v, %d CE signals, lost %d, max queue %d B, srtt %v",
		d.doneAt, srv.ECN, cli.ECN, srv.Recovery.ECNCEIncreases, srv.PacketsLost, down.MaxQueueBytes, srv.SmoothedRTT)
	if srv.ECN.State != ECNCapable || cli.ECN.State != ECNCapable {
		t.Fatalf("ECN states %v and %v, want capable", srv.ECN.State, cli.ECN.State)
	}
	if srv.PacketsLost != 0 || down.Dropped() != 0 {
		t.Errorf("ECN run lost %d packets (%d dropped by the link)", srv.PacketsLost, down.Dropped())
	}
	if srv.Recovery.ECNCEIncreases == 0 || srv.Recovery.CongestionSignals != srv.Recovery.ECNCEIncreases {
		t.Errorf("%d CE increases of %d congestion signals, want all signals from CE", srv.Recovery.ECNCEIncreases, srv.Recovery.CongestionSignals)
	}
	// Every mark the link made reached the client and was counted; the
	// server learned of all but those arriving after its last ACK.
	if cli.ECN.CEReceived != uint64(down.CEMarked) || srv.ECN.CEReported == 0 || srv.ECN.CEReported > cli.ECN.CEReceived {
		t.Errorf("link marked %d, client received %d, server told of %d", down.CEMarked, cli.ECN.CEReceived, srv.ECN.CEReported)
	}
	if limit := sp.client.completedAt + serialization(size, prof.Down.RateBps); float64(d.doneAt) > 1.06*float64(limit) {
		t.Errorf("transfer took %v, physical limit %v", d.doneAt, limit)
	}

	sp, d = run(true)
	base := sp.server.conn.Stats()
	_, baseDown := sp.path.Stats()
	t.Logf("no ECN: %v, lost %d, max queue %d B, srtt %v", d.doneAt, base.PacketsLost, baseDown.MaxQueueBytes, base.SmoothedRTT)
	if base.ECN.State != ECNDisabled || base.ECN.PacketsMarked != 0 || sp.client.conn.Stats().ECN.CEReceived != 0 {
		t.Errorf("disabled ECN: server %+v, client %+v", base.ECN, sp.client.conn.Stats().ECN)
	}
	if base.PacketsLost == 0 {
		t.Errorf("the queue never overflowed without ECN: the test shows nothing")
	}
}

// A downlink that clears the ECN field: the client sees no marks and
// reports no counts, so the server's validation fails after the testing
// period and it stops marking; the uplink keeps ECN.
func TestSimECNBleached(t *testing.T) {
	ccfg, scfg := testConfigs(t, 21)
	sp, _ := runECNDownload(t, ecnProfile(t, 12*1200, true), 1<<20, ccfg, scfg, nil)
	srv, cli := sp.server.conn.Stats(), sp.client.conn.Stats()
	t.Logf("server %+v, client %+v", srv.ECN, cli.ECN)
	if srv.ECN.State != ECNFailed || !strings.Contains(srv.ECN.Failure, "without ECN counts") {
		t.Errorf("server ECN %v (%s), want failed for missing counts", srv.ECN.State, srv.ECN.Failure)
	}
	if srv.ECN.PacketsMarked != ecnTestPackets {
		t.Errorf("server marked %d packets, want the %d of the testing period", srv.ECN.PacketsMarked, ecnTestPackets)
	}
	if cli.ECN.ECTReceived+cli.ECN.CEReceived != 0 || srv.Recovery.ECNCEIncreases != 0 {
		t.Errorf("marks crossed a bleaching link: client %+v, %d CE signals", cli.ECN, srv.Recovery.ECNCEIncreases)
	}
	if cli.ECN.State != ECNCapable {
		t.Errorf("client ECN %v over a clean uplink, want capable", cli.ECN.State)
	}
}

// A path that drops ECN-capable datagrams: every marked packet of the
// testing period is lost, the server stops marking, and the transfer
// completes unmarked.
func TestSimECNDropped(t *testing.T) {
	ccfg, scfg := testConfigs(t, 22)
	sp, _ := runECNDownload(t, ecnProfile(t, 0, false), 1<<20, ccfg, scfg, func(sp *simPair) {
		sp.client.Drop = func(d Datagram) bool { return d.ECN != netsim.NotECT }
	})
	srv := sp.server.conn.Stats()
	t.Logf("server %+v, lost %d", srv.ECN, srv.PacketsLost)
	if srv.ECN.State != ECNFailed || !strings.Contains(srv.ECN.Failure, "lost") {
		t.Errorf("server ECN %v (%s), want failed for lost marks", srv.ECN.State, srv.ECN.Failure)
	}
	if srv.ECN.PacketsMarked != ecnTestPackets || srv.PacketsLost < ecnTestPackets {
		t.Errorf("server marked %d and lost %d packets, want %d marked and lost", srv.ECN.PacketsMarked, srv.PacketsLost, ecnTestPackets)
	}
}

// A peer whose counts claim more ECT(0) packets than were sent fails
// validation: its CE counts then signal nothing.
func TestSimECNWrongCounts(t *testing.T) {
	ccfg, scfg := testConfigs(t, 23)
	d := newDownload(t, 1<<20)
	sp := newSimPair(t, ecnProfile(t, 12*1200, false), 42, ccfg, scfg, nil)
	sp.server.app = d.server
	read := d.client(nil)
	lied := false
	sp.client.app = func(now time.Duration, c *Conn) {
		if !d.haveID {
			for _, ev := range sp.client.events {
				if ev.Kind == EventStreamOpened {
					d.clientID, d.haveID = ev.StreamID, true
				}
			}
		}
		if c.ecn.recv[spaceApp].ECT0 > 0 && !lied {
			// Inflate the counts the client reports.
			c.ecn.recv[spaceApp].ECT0 += 1000
			lied = true
		}
		read(now, c)
	}
	sp.run(t, func() bool { return d.done }, 60*time.Second)
	srv := sp.server.conn.Stats()
	t.Logf("server %+v, CE signals %d", srv.ECN, srv.Recovery.ECNCEIncreases)
	if srv.ECN.State != ECNFailed || !strings.Contains(srv.ECN.Failure, "above the") {
		t.Errorf("server ECN %v (%s), want failed for counts above those sent", srv.ECN.State, srv.ECN.Failure)
	}
	if srv.Recovery.ECNCEIncreases != 0 {
		t.Errorf("%d CE signals from counts that failed validation", srv.Recovery.ECNCEIncreases)
	}
}

// The qlog records the ECN state changes and the counts of received
// ACK_ECN frames.
func TestSimECNQlog(t *testing.T) {
	ccfg, scfg := testConfigs(t, 24)
	// A path MTU probe acknowledged early validates ECN before the
	// testing period ends, and the unknown state is not logged.
	ccfg.DisablePathMTUDiscovery, scfg.DisablePathMTUDiscovery = true, true
	var sq bytes.Buffer
	scfg.Qlog = &sq
	runECNDownload(t, ecnProfile(t, 12*1200, false), 512<<10, ccfg, scfg, nil)
	_, evs := parseQlog(t, sq.Bytes())
	var states []string
	acksWithCE := 0
	for _, ev := range evs {
		switch ev.Name {
		case "recovery:ecn_state_updated":
			states = append(states, fmt.Sprintf("%v->%v", ev.Data["old"], ev.Data["new"]))
		case "transport:packet_received":
			frames, _ := ev.Data["frames"].([]any)
			for _, f := range frames {
				if m, _ := f.(map[string]any); m["frame_type"] == "ack" && m["ce"] != nil {
					acksWithCE++
				}
			}
		}
	}
	if want := []string{"testing->unknown", "unknown->capable"}; !slices.Equal(states, want) {
		t.Errorf("ECN states %v, want %v", states, want)
	}
	if acksWithCE == 0 {
		t.Error("no ACK frame with ECN counts in the qlog")
	}
}
