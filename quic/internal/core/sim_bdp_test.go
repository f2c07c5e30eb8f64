package core

import (
	"bytes"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// bdpRun is one request over a simulated path with Careful Resume on: the
// response time from the start of the connection, both ends' counters and
// the Careful Resume phases the server's qlog shows.
type bdpRun struct {
	doneAt         time.Duration
	client, server CarefulResumeStats
	phases         []string
}

// simBDPRequest runs a request for a response of size bytes over prof,
// then lets the connection run two more round trips, until the server's
// last BDP frame reached the client and the ticket holds it.
func simBDPRequest(t *testing.T, prof netsim.Profile, seed uint64, ccfg, scfg *Config, size int) bdpRun {
	t.Helper()
	var sq bytes.Buffer
	scfg.Qlog = &sq
	defer func() { scfg.Qlog = nil }()
	sp, r, _ := simRequest(t, prof, seed, ccfg, scfg, payload(100, 1), payload(size, 2))
	srv := sp.server.conn
	end := sp.net.Now() + 2*prof.Up.Delay + 2*prof.Down.Delay
	sp.run(t, func() bool {
		cs, ss := sp.client.conn.Stats().CarefulResume, srv.Stats().CarefulResume
		return sp.net.Now() >= end && !srv.bdp.pending && cs.BDPFramesReceived >= ss.BDPFramesSent
	}, end+10*time.Second)
	run := bdpRun{doneAt: r.doneAt, client: sp.client.conn.Stats().CarefulResume, server: srv.Stats().CarefulResume}
	_, evs := parseQlog(t, sq.Bytes())
	for _, ev := range evs {
		if ev.Name == "recovery:careful_resume_phase_updated" {
			run.phases = append(run.phases, ev.Data["new"].(string))
		}
	}
	return run
}

// TestSimGeoCarefulResume: over the geo profile (50 Mbit/s, 650 ms), a
// first connection downloads enough to measure the path and the server
// hands its state over in BDP frames, the last one when its sending
// stops; the client keeps it with its ticket. A second connection,
// resumed with 0-RTT, returns it in its first 0-RTT packet and the server
// resumes from it: Careful Resume starts in Reconnaissance from the state
// the first connection measured (about the path's 4 MB per round trip).
// The same resumed connection without Careful Resume logs no phase.
func TestSimGeoCarefulResume(t *testing.T) {
	prof := profile(t, "geo")
	bdp := int64(prof.Down.RateBps / 8 * (prof.Up.Delay + prof.Down.Delay).Seconds())
	for _, size := range []int{1_000_000, 500_000} {
		ccfg, scfg := resumeConfigs(t, 140)
		ccfg.Allow0RTT, scfg.Allow0RTT = true, true
		withCarefulResume(t, ccfg, scfg, 1)
		first := simBDPRequest(t, prof, 1, ccfg, scfg, 8_000_000)
		if first.server.BDPFramesSent < 2 || first.client.BDPFramesReceived != first.server.BDPFramesSent {
			t.Fatalf("first connection: server %+v, client %+v", first.server, first.client)
		}
		if _, ok := cachedBlob(t, ccfg); !ok {
			t.Fatal("no BDP blob with the ticket")
		}

		resumed := simBDPRequest(t, prof, 2, ccfg, scfg, size)
		s := resumed.server
		if s.BDPFramesAccepted != 1 || s.Rejected.Total() != 0 || resumed.client.BDPFramesSent != 1 {
			t.Fatalf("resumed connection: server %+v, client %+v", s, resumed.client)
		}
		if s.Resumed.SavedCwnd < bdp*9/10 || s.Resumed.SavedCwnd > bdp*11/10 || s.Resumed.SavedRTT < prof.Up.Delay+prof.Down.Delay {
			t.Errorf("resumed from %+v, want about %d B per round trip", s.Resumed, bdp)
		}
		if len(resumed.phases) == 0 || resumed.phases[0] != "reconnaissance" || s.PhaseChanges != uint64(len(resumed.phases)) {
			t.Errorf("phases %v, %d changes counted", resumed.phases, s.PhaseChanges)
		}

		ccfg.CarefulResume = nil // the same resumed 0-RTT connection, cold
		cold := simBDPRequest(t, prof, 2, ccfg, scfg, size)
		t.Logf("%d B: resumed %v (phases %v, saved %d B per %v), cold 0-RTT %v",
			size, resumed.doneAt, resumed.phases, s.Resumed.SavedCwnd, s.Resumed.SavedRTT, cold.doneAt)
		if cold.server.BDPFramesAccepted != 0 || len(cold.phases) != 0 || cold.server.Negotiated {
			t.Errorf("cold connection resumed: %+v %v", cold.server, cold.phases)
		}
	}
}
