package http3

import (
	"net/http"
	"testing"
	"time"
)

// TestDateCache: the cached Date value is that of the second asked for,
// formatted as RFC 9110's IMF-fixdate, whatever the time zone.
func TestDateCache(t *testing.T) {
	var c dateCache
	zone := time.FixedZone("X", 5*3600)
	t0 := time.Date(2026, 3, 1, 12, 0, 7, 100, time.UTC)
	if got, want := c.format(t0), "Sun, 01 Mar 2026 12:00:07 GMT"; got != want {
		t.Fatalf("format = %q, want %q", got, want)
	}
	if got := c.format(t0.Add(800 * time.Millisecond).In(zone)); got != "Sun, 01 Mar 2026 12:00:07 GMT" {
		t.Errorf("same second: %q", got)
	}
	next := t0.Add(time.Second).In(zone)
	if got, want := c.format(next), next.UTC().Format(http.TimeFormat); got != want || got != "Sun, 01 Mar 2026 12:00:08 GMT" {
		t.Errorf("next second: %q, want %q", got, want)
	}
	// An earlier second (the clock stepped back) is formatted anew too.
	if got := c.format(t0.Add(-time.Hour)); got != "Sun, 01 Mar 2026 11:00:07 GMT" {
		t.Errorf("earlier second: %q", got)
	}
}
