package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

func TestLimit(t *testing.T) {
	ifc, err := netsim.LookupProfile("seed-ifc") // 50 Mbit/s down, 100 ms RTT
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		handshakes int
		size       int64
		want       time.Duration
	}{
		// TCP + TLS 1.3: 3 RTT (300 ms), then 8 Mbit at 50 Mbit/s (160 ms).
		{2, 1e6, 460 * time.Millisecond},
		{2, 10e6, 1900 * time.Millisecond},
		{2, 20e6, 3500 * time.Millisecond},
		// QUIC: one round trip fewer.
		{1, 1e6, 360 * time.Millisecond},
		// 0-RTT: only the request's round trip.
		{0, 1e6, 260 * time.Millisecond},
	} {
		if got := Limit(ifc, c.handshakes, c.size); got != c.want {
			t.Errorf("Limit(seed-ifc, %d handshake RTTs, %d B) = %v, want %v", c.handshakes, c.size, got, c.want)
		}
	}
	// The downlink's rate counts, not the uplink's: geo is 50 down, 10 up,
	// 650 ms RTT.
	geo, err := netsim.LookupProfile("geo")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Limit(geo, 2, 5e6), 3*650*time.Millisecond+800*time.Millisecond; got != want {
		t.Errorf("Limit(geo) = %v, want %v", got, want)
	}
	// A path without a rate limit costs its round trips only.
	free := netsim.Profile{Up: netsim.LinkConfig{Delay: 5 * time.Millisecond}, Down: netsim.LinkConfig{Delay: 5 * time.Millisecond}}
	if got := Limit(free, 2, 1e9); got != 30*time.Millisecond {
		t.Errorf("Limit without a rate = %v, want 30ms", got)
	}
	f := LimitFormula(ifc, 2)
	for _, want := range []string{"3 RTT", "2 handshake", "100ms", "50 Mbit/s"} {
		if !strings.Contains(f, want) {
			t.Errorf("LimitFormula %q lacks %q", f, want)
		}
	}
}
