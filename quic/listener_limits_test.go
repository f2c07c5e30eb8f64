package quic

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// sourceOf: a source is an IPv4 address or an IPv6 /64, whatever the port
// and however the address is written.
func TestSourceOf(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.7:1000", "192.0.2.7:2000"},
		{"[::ffff:192.0.2.7]:1000", "192.0.2.7:3000"},
		{"[2001:db8:1:2::1]:443", "[2001:db8:1:2:ffff:ffff:ffff:ffff]:5000"},
		{"[fe80::1%eth0]:1", "[fe80::2]:2"},
	} {
		a, b := netip.MustParseAddrPort(tc.a), netip.MustParseAddrPort(tc.b)
		if sourceOf(a) != sourceOf(b) {
			t.Errorf("%v and %v: sources %v and %v, want one", a, b, sourceOf(a), sourceOf(b))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.7:1000", "192.0.2.8:1000"},
		{"[2001:db8:1:2::1]:443", "[2001:db8:1:3::1]:443"},
	} {
		a, b := netip.MustParseAddrPort(tc.a), netip.MustParseAddrPort(tc.b)
		if sourceOf(a) == sourceOf(b) {
			t.Errorf("%v and %v: both source %v, want two", a, b, sourceOf(a))
		}
	}
}

// serverLimits fills in the defaults, derives the eviction delays from the
// round trip and the idle timeout, and refuses negative limits.
func TestServerLimits(t *testing.T) {
	lim, err := (*Config)(nil).serverLimits()
	if err != nil {
		t.Fatal(err)
	}
	want := serverLimits{
		handshakes: DefaultMaxHandshakes, handshakesPerIP: DefaultMaxHandshakesPerIP,
		conns: DefaultMaxConnections, connsPerIP: DefaultMaxConnectionsPerIP,
		unvalidated:      DefaultMaxUnvalidatedHandshakes,
		handshakeSilence: 999 * time.Millisecond, idleEviction: 15 * time.Second,
		handshakeBusyAge: 3996 * time.Millisecond,
	}
	if lim != want {
		t.Errorf("defaults %+v, want %+v", lim, want)
	}
	lim, err = (&Config{MaxConnections: 5, InitialRTT: 600 * time.Millisecond, MaxIdleTimeout: time.Minute}).serverLimits()
	if err != nil || lim.conns != 5 || lim.handshakeSilence != 1800*time.Millisecond || lim.idleEviction != 30*time.Second {
		t.Errorf("set: %+v, %v", lim, err)
	}
	if lim, err = (&Config{MaxUnvalidatedHandshakes: 7}).serverLimits(); err != nil || lim.unvalidated != 7 {
		t.Errorf("MaxUnvalidatedHandshakes 7: %+v, %v", lim, err)
	}
	for _, c := range []*Config{{MaxHandshakesPerIP: -1}, {MaxUnvalidatedHandshakes: -1}} {
		if _, err := c.serverLimits(); !errors.Is(err, errConfig) {
			t.Errorf("a negative limit: %v, want errConfig", err)
		}
	}
}

// silentFor finds the slot silent the longest, skipping and requeueing
// those heard from since they were placed, and none silent for less than
// asked.
func TestSlotQueueSilentFor(t *testing.T) {
	var q slotQueue
	slots := make([]*connSlot, 4)
	for i := range slots {
		slots[i] = &connSlot{}
		q.push(slots[i], time.Duration(i)*time.Second)
	}
	slots[0].heard.Add(1)
	if s := q.silentFor(5*time.Second, 10*time.Second); s != slots[1] {
		t.Errorf("first: slot %p, want slot 1 (%p)", s, slots[1])
	}
	q.remove(slots[1])
	// Slot 0 was requeued as if placed at 10 s: slot 2 comes next, then
	// slot 3, then none until slot 0 has been silent long enough.
	for _, want := range []int{2, 3} {
		s := q.silentFor(5*time.Second, 10*time.Second)
		if s != slots[want] {
			t.Fatalf("slot %p, want slot %d", s, want)
		}
		q.remove(s)
	}
	if s := q.silentFor(5*time.Second, 14*time.Second); s != nil {
		t.Errorf("slot 0 silent for 4 s taken for 5 s")
	}
	if s := q.silentFor(5*time.Second, 15*time.Second); s != slots[0] {
		t.Errorf("slot 0 silent for 5 s not found")
	}
}
