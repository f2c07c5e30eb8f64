package quicsim

import (
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// TestZeroRTTDownload: over geo (650 ms round trip), a small body comes
// one round trip after the start of a resumed connection that asks for it
// in 0-RTT, and two round trips after the start of a new one; a larger
// body is no later resumed than new; the same seed gives the same times.
func TestZeroRTTDownload(t *testing.T) {
	p, err := netsim.LookupProfile("geo")
	if err != nil {
		t.Fatal(err)
	}
	rtt := p.RTT()
	run := func(size int64, zeroRTT bool) time.Duration {
		t.Helper()
		r, err := Download(DownloadConfig{Profile: p.WithSeed(3), Seed: 3, Size: size, MaxDatagramSize: 1452, ZeroRTT: zeroRTT})
		if err != nil {
			t.Fatalf("size %d, 0-RTT %v: %v", size, zeroRTT, err)
		}
		if r.Bytes != size {
			t.Fatalf("size %d, 0-RTT %v: received %d bytes", size, zeroRTT, r.Bytes)
		}
		return r.Elapsed
	}
	const small = 4000
	cold, early := run(small, false), run(small, true)
	if early < rtt || early > rtt+10*time.Millisecond {
		t.Errorf("%d bytes in 0-RTT: %v, want one round trip (%v) and a few datagrams' serialization", small, early, rtt)
	}
	if cold < 2*rtt {
		t.Errorf("%d bytes on a new connection: %v, less than two round trips", small, cold)
	}
	if again := run(small, true); again != early {
		t.Errorf("same seed, %v then %v", early, again)
	}
	const large = 1_000_000
	if cold, early := run(large, false), run(large, true); early > cold {
		t.Errorf("%d bytes: %v resumed with 0-RTT, %v on a new connection", large, early, cold)
	}
}

// TestZeroRTTNotForRequests: Requests measures a single connection.
func TestZeroRTTNotForRequests(t *testing.T) {
	_, err := Requests(RequestsConfig{DownloadConfig: DownloadConfig{Profile: seedIFC(t, 1), ZeroRTT: true, Size: 10}, Requests: 1})
	if err == nil {
		t.Error("Requests with ZeroRTT did not fail")
	}
}
