package core

import "testing"

// TestAmplificationBudget: before validation a server sends at most three
// times what it received (RFC 9000 section 8.1); afterwards nothing holds
// it back.
func TestAmplificationBudget(t *testing.T) {
	var a amplification
	if got := a.limit(1500); got != 0 {
		t.Fatalf("nothing received: limit %d, want 0", got)
	}
	a.onReceived(1200)
	if got := a.limit(1500); got != 1500 {
		t.Errorf("3600 bytes allowed: limit %d, want 1500", got)
	}
	a.onSent(3000)
	if got := a.limit(1500); got != 600 {
		t.Errorf("600 bytes left: limit %d, want 600", got)
	}
	if !a.allows(600) || a.allows(601) {
		t.Errorf("600 bytes left: allows(600) %v, allows(601) %v", a.allows(600), a.allows(601))
	}
	a.onSent(600)
	if got := a.limit(1500); got != 0 {
		t.Errorf("budget spent: limit %d, want 0", got)
	}
	if !a.setLimited(true) || a.setLimited(true) {
		t.Error("setLimited reports no change, or a repeated one")
	}
	a.validate()
	if a.limited || a.limit(1500) != 1500 || !a.allows(1<<40) {
		t.Errorf("validated: limited %v, limit %d", a.limited, a.limit(1500))
	}
	a.onReceived(100)
	a.onSent(100)
	if a.received != 1200 || a.sent != 3600 {
		t.Errorf("counted after validation: received %d, sent %d", a.received, a.sent)
	}
}
