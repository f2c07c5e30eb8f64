package core

import (
	"bytes"
	"slices"
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

// laterServer is the server configuration scfg at a connection d after
// the first: its wall clock, which dates tokens and saved states, moved
// on (the simulation's time restarts at 0 with each connection).
func laterServer(scfg *Config, d time.Duration) *Config {
	c := *scfg
	if scfg.AddressValidator != nil {
		v := *scfg.AddressValidator
		v.Epoch = v.Epoch.Add(d)
		c.AddressValidator = &v
	}
	if scfg.CarefulResume != nil {
		r := *scfg.CarefulResume
		r.Epoch = r.Epoch.Add(d)
		c.CarefulResume = &r
	}
	return &c
}

// TestSimGeoCarefulResume: over the geo profile (50 Mbit/s, 650 ms), a
// first connection downloads enough to measure the path and the server
// hands its state over in BDP frames, the last one when its sending
// stops; the client keeps it with its ticket, and a NEW_TOKEN token as
// satquic get does. A minute later a second connection, resumed with
// 0-RTT, returns the state in its first 0-RTT packet; the server, which
// the token let answer the 0-RTT request at once with a full initial
// window, resumes from it: Reconnaissance until the first
// acknowledgement confirms the path's RTT, then a jump to half the saved
// window (Unvalidated), Validating and Normal. The response arrives 0.4
// to 0.5 s sooner than on the same resumed connection without Careful
// Resume, whose long-RTT slow start needs a round trip more: 1 MB in
// 1.676 s instead of 2.094 s, 500 kB in 1.507 s instead of 2.012 s, from
// the start of the connection. Half the saved window paced over the
// first round trip after the jump, as RFC 9959 has it, bounds it: the
// first acknowledgement reaches the server at 0.98 s.
func TestSimGeoCarefulResume(t *testing.T) {
	prof := profile(t, "geo")
	bdp := int64(prof.Down.RateBps / 8 * (prof.Up.Delay + prof.Down.Delay).Seconds())
	for _, tc := range []struct {
		size          int
		resumed, cold time.Duration
	}{
		{1_000_000, 1676032961, 2093982645},
		{500_000, 1507304209, 2011578965},
	} {
		ccfg, scfg := resumeConfigs(t, 140)
		ccfg.Allow0RTT, scfg.Allow0RTT = true, true
		ccfg.TokenStore = NewTokenCache(2)
		scfg.AddressValidator = newValidator(t, 3, 10*time.Second)
		withCarefulResume(t, ccfg, scfg, 1)
		first := simBDPRequest(t, prof, 1, ccfg, scfg, 8_000_000)
		if first.server.BDPFramesSent < 2 || first.client.BDPFramesReceived != first.server.BDPFramesSent {
			t.Fatalf("first connection: server %+v, client %+v", first.server, first.client)
		}
		if _, ok := cachedBlob(t, ccfg); !ok {
			t.Fatal("no BDP blob with the ticket")
		}

		resumed := simBDPRequest(t, prof, 2, ccfg, laterServer(scfg, time.Minute), tc.size)
		s := resumed.server
		if s.BDPFramesAccepted != 1 || s.Rejected.Total() != 0 || resumed.client.BDPFramesSent != 1 {
			t.Fatalf("resumed connection: server %+v, client %+v", s, resumed.client)
		}
		if s.Resumed.SavedCwnd < bdp*9/10 || s.Resumed.SavedCwnd > bdp*11/10 || s.Resumed.SavedRTT < prof.Up.Delay+prof.Down.Delay {
			t.Errorf("resumed from %+v, want about %d B per round trip", s.Resumed, bdp)
		}
		want := []string{"reconnaissance", "unvalidated", "validating", "normal"}
		if !slices.Equal(resumed.phases, want) || s.PhaseChanges != uint64(len(want)) {
			t.Errorf("phases %v (%d changes counted), want %v", resumed.phases, s.PhaseChanges, want)
		}

		ccfg.CarefulResume = nil // the same resumed 0-RTT connection, cold
		cold := simBDPRequest(t, prof, 2, ccfg, laterServer(scfg, 2*time.Minute), tc.size)
		if cold.server.BDPFramesAccepted != 0 || len(cold.phases) != 0 || cold.server.Negotiated {
			t.Errorf("cold connection resumed: %+v %v", cold.server, cold.phases)
		}
		t.Logf("%d B: resumed %v (saved %d B per %v), cold 0-RTT %v", tc.size, resumed.doneAt, s.Resumed.SavedCwnd, s.Resumed.SavedRTT, cold.doneAt)
		if resumed.doneAt != tc.resumed || cold.doneAt != tc.cold {
			t.Errorf("%d B: resumed %v, cold %v; want %v and %v", tc.size, resumed.doneAt, cold.doneAt, tc.resumed, tc.cold)
		}
	}
}
