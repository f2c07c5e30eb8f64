package quicsim

import (
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

func seedIFC(t *testing.T, seed uint64) netsim.Profile {
	t.Helper()
	p, err := netsim.LookupProfile("seed-ifc")
	if err != nil {
		t.Fatal(err)
	}
	return p.WithSeed(seed)
}

// TestDownloadDeterministic: the same seed gives the same completion time
// to the nanosecond, and the time respects the physical bound (two round
// trips plus the body at the link rate).
func TestDownloadDeterministic(t *testing.T) {
	const size = 2 << 20
	cfg := DownloadConfig{Profile: seedIFC(t, 7), Seed: 7, Size: size, MaxDatagramSize: 1452}
	a, err := Download(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Download(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Elapsed != b.Elapsed || a.Down != b.Down || a.Up != b.Up {
		t.Errorf("same seed, different runs: %v (down %+v) and %v (down %+v)", a.Elapsed, a.Down, b.Elapsed, b.Down)
	}
	if a.Bytes != size {
		t.Errorf("received %d bytes, want %d", a.Bytes, size)
	}
	rtt := cfg.Profile.RTT()
	floor := 2*rtt + time.Duration(float64(size)*8/cfg.Profile.Down.PeakRateBps()*float64(time.Second))
	if a.Elapsed < floor || a.Elapsed > 20*floor {
		t.Errorf("download took %v; physical limit %v", a.Elapsed, floor)
	}
	if a.Handshake < rtt || a.Handshake >= a.Elapsed {
		t.Errorf("handshake completed at %v, download at %v, RTT %v", a.Handshake, a.Elapsed, rtt)
	}
	t.Logf("%d bytes in %v (limit %v), handshake %v, down lost %d, server lost %d PTOs %d",
		size, a.Elapsed, floor, a.Handshake, a.Down.DroppedLoss, a.ServerPacketsLost, a.ServerPTOs)
	c, err := Download(DownloadConfig{Profile: seedIFC(t, 8), Seed: 8, Size: size, MaxDatagramSize: 1452})
	if err != nil {
		t.Fatal(err)
	}
	if c.Down == a.Down {
		t.Errorf("seeds 7 and 8 drew the same losses: %+v", c.Down)
	}
}

func TestDownloadEmptyAndErrors(t *testing.T) {
	r, err := Download(DownloadConfig{Profile: seedIFC(t, 1), Seed: 1, Size: 0})
	if err != nil || r.Bytes != 0 || r.Elapsed <= 0 {
		t.Errorf("empty body: %+v, %v", r, err)
	}
	if _, err := Download(DownloadConfig{Profile: seedIFC(t, 1), Size: 1, CongestionControl: "vegas"}); err == nil {
		t.Error("unknown congestion controller accepted")
	}
	if _, err := Download(DownloadConfig{Profile: seedIFC(t, 1), Size: -1}); err == nil {
		t.Error("negative size accepted")
	}
	// A limit shorter than the handshake ends the run with an error.
	if _, err := Download(DownloadConfig{Profile: seedIFC(t, 1), Size: 1 << 20, Limit: 50 * time.Millisecond}); err == nil {
		t.Error("download finished within 50 ms of simulated time")
	}
}

// TestRequestsOnOneConnection makes sequential requests on one connection
// over a clean path: each takes one round trip plus the response's
// transmission, and the gap keeps them apart.
func TestRequestsOnOneConnection(t *testing.T) {
	prof, err := netsim.LookupProfile("p2p")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Requests(RequestsConfig{
		DownloadConfig: DownloadConfig{Profile: prof.WithSeed(1), Seed: 1, Size: 10_000, FEC: true},
		Requests:       20,
		Gap:            50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Times) != 20 {
		t.Fatalf("%d requests completed", len(res.Times))
	}
	rtt := prof.RTT()
	for i, d := range res.Times {
		// 10 kB at 10 Mbit/s is 8 ms; the first response may still
		// grow the window.
		if d < rtt || d > 2*rtt+20*time.Millisecond {
			t.Errorf("request %d took %v, RTT %v", i+1, d, rtt)
		}
	}
	if res.Server.FEC.RepairsSent == 0 {
		t.Error("no tail repair protected the responses")
	}
	if _, err := Requests(RequestsConfig{DownloadConfig: DownloadConfig{Profile: prof, Size: 1}, Requests: 0}); err == nil {
		t.Error("0 requests accepted")
	}
	if _, err := Requests(RequestsConfig{DownloadConfig: DownloadConfig{Profile: prof, Size: 1}, Requests: 1, Parallel: -1}); err == nil {
		t.Error("-1 flows accepted")
	}
}

// TestRequestsInParallelFlows runs flows at once on one connection: with
// no gap each flow sends its next request as soon as its response is in,
// so 4 flows finish 40 requests in about the time one flow takes for 10,
// and no request waits more than a round trip for the others.
func TestRequestsInParallelFlows(t *testing.T) {
	prof, err := netsim.LookupProfile("p2p")
	if err != nil {
		t.Fatal(err)
	}
	run := func(parallel, requests int) RequestsResult {
		t.Helper()
		res, err := Requests(RequestsConfig{
			DownloadConfig: DownloadConfig{Profile: prof.WithSeed(1), Seed: 1, Size: 2_000, FEC: true},
			Requests:       requests,
			Parallel:       parallel,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Times) != requests {
			t.Fatalf("%d flows: %d of %d requests completed", parallel, len(res.Times), requests)
		}
		return res
	}
	one, four := run(1, 10), run(4, 40)
	var sumOne, sumFour time.Duration
	for _, d := range one.Times {
		sumOne += d
	}
	rtt := prof.RTT()
	for i, d := range four.Times {
		sumFour += d
		if d < rtt || d > 2*rtt+20*time.Millisecond {
			t.Errorf("request %d took %v, RTT %v", i+1, d, rtt)
		}
	}
	// Each flow's requests follow each other (their times add up to about
	// four times one flow's), and the flows overlap (the run takes about
	// as long as one flow's).
	if sumFour < 3*sumOne || sumFour > 5*sumOne {
		t.Errorf("4 flows of 10 requests took %v in all, 1 flow %v", sumFour, sumOne)
	}
	if four.Elapsed > 2*one.Elapsed || one.Elapsed < sumOne {
		t.Errorf("4 flows of 10 requests ran for %v, 1 flow for %v (its requests %v)", four.Elapsed, one.Elapsed, sumOne)
	}
	if got := four.Server.PacketsReceived; got == 0 {
		t.Error("the server received nothing")
	}
}
