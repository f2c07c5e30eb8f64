package recovery

import (
	"testing"
	"time"
)

// Application space after confirmation, without an RTT sample: the period
// is 333 + 4*166.5 + 25 = 1024 ms, doubled by each PTO (RFC 9002 section
// 6.2.1), measured from the last ack-eliciting packet.
func TestPTOApplicationBackoff(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 0)
	wantDeadline(t, s, 1024*ms)

	res := s.OnTimeout(1024 * ms)
	if res.Probe != (Probe{Space: SpaceApplication, Count: 2}) {
		t.Fatalf("probe %+v", res.Probe)
	}
	if s.PTOCount() != 1 || s.ProbesPending(SpaceApplication) != 2 {
		t.Fatalf("pto count %d probes %d", s.PTOCount(), s.ProbesPending(SpaceApplication))
	}
	wantDeadline(t, s, 2048*ms)
	// Probes ignore the window and the pacer.
	if !s.CanSend() || s.NextSendTime(1024*ms, 1200) != 1024*ms {
		t.Fatal("a probe is blocked")
	}
	send(t, s, 1024*ms, SpaceApplication, 1)
	send(t, s, 1024*ms, SpaceApplication, 2)
	if s.ProbesPending(SpaceApplication) != 0 {
		t.Fatal("probes not consumed")
	}
	wantDeadline(t, s, 3072*ms)

	s.OnTimeout(3072 * ms)
	send(t, s, 3072*ms, SpaceApplication, 3)
	wantDeadline(t, s, 3072*ms+4096*ms)
	if s.Stats().PTOs != 2 {
		t.Fatalf("PTOs %d, want 2", s.Stats().PTOs)
	}
	// An acknowledgement resets the backoff.
	ack(t, s, 3200*ms, SpaceApplication, 0, rng(3, 3))
	if s.PTOCount() != 0 {
		t.Fatalf("pto count %d after an ACK", s.PTOCount())
	}
}

// Initial and Handshake periods exclude max_ack_delay; the application
// space has no PTO before the handshake is confirmed (section 6.2.1).
func TestPTOPerSpace(t *testing.T) {
	s := newSender(t, testConfig(NewReno))
	send(t, s, 0, SpaceInitial, 0)
	wantDeadline(t, s, 999*ms)
	ack(t, s, 100*ms, SpaceInitial, 0, rng(0, 0))
	// RTT 100 ms: period 100 + 4*50 = 300 ms.
	s.SetHandshakeKeys(100 * ms)
	send(t, s, 100*ms, SpaceHandshake, 0)
	send(t, s, 100*ms, SpaceApplication, 0)
	wantDeadline(t, s, 400*ms)

	res := s.OnTimeout(400 * ms)
	if res.Probe != (Probe{Space: SpaceHandshake, Count: 2}) {
		t.Fatalf("probe %+v", res.Probe)
	}
	wantDeadline(t, s, 700*ms)

	// Confirmation and discarding the Handshake space bring the
	// application space in, with max_ack_delay, and reset the backoff.
	s.ConfirmHandshake(450 * ms)
	if _, err := s.DiscardSpace(450*ms, SpaceHandshake); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DiscardSpace(450*ms, SpaceInitial); err != nil {
		t.Fatal(err)
	}
	wantDeadline(t, s, 425*ms)
	if res := s.OnTimeout(450 * ms); res.Probe != (Probe{Space: SpaceApplication, Count: 2}) {
		t.Fatalf("probe %+v", res.Probe)
	}
}

// The earliest space wins.
func TestPTOEarliestSpace(t *testing.T) {
	s := newSender(t, testConfig(NewReno))
	s.SetHandshakeKeys(0)
	send(t, s, 10*ms, SpaceInitial, 0)
	send(t, s, 0, SpaceHandshake, 0)
	wantDeadline(t, s, 999*ms)
	if res := s.OnTimeout(999 * ms); res.Probe.Space != SpaceHandshake {
		t.Fatalf("probe in %v, want handshake", res.Probe.Space)
	}
}

// A client with nothing in flight whose peer has not validated its address
// arms the anti-deadlock PTO from now (section 6.2.2.1) and sends one
// padded Initial, or one Handshake packet once it has the keys.
func TestPTOAntiDeadlock(t *testing.T) {
	s := newSender(t, testConfig(NewReno))
	send(t, s, 0, SpaceInitial, 0)
	ack(t, s, 100*ms, SpaceInitial, 0, rng(0, 0))
	wantDeadline(t, s, 400*ms)
	res := s.OnTimeout(400 * ms)
	if res.Probe != (Probe{Space: SpaceInitial, Count: 1, AntiDeadlock: true}) {
		t.Fatalf("probe %+v", res.Probe)
	}
	s.SetHandshakeKeys(450 * ms)
	// Backoff 1: 450 + 600.
	wantDeadline(t, s, 1050*ms)
	res = s.OnTimeout(1050 * ms)
	if res.Probe != (Probe{Space: SpaceHandshake, Count: 1, AntiDeadlock: true}) {
		t.Fatalf("probe %+v", res.Probe)
	}
	// An acknowledged Handshake packet proves the address: no timer with
	// nothing in flight.
	send(t, s, 1100*ms, SpaceHandshake, 0)
	ack(t, s, 1200*ms, SpaceHandshake, 0, rng(0, 0))
	wantNoDeadline(t, s)
}

// A server never arms the anti-deadlock PTO and arms none while blocked by
// the anti-amplification limit.
func TestPTOServer(t *testing.T) {
	cfg := testConfig(NewReno)
	cfg.IsServer = true
	s := newSender(t, cfg)
	wantNoDeadline(t, s)
	send(t, s, 0, SpaceInitial, 0)
	wantDeadline(t, s, 999*ms)
	s.SetAmplificationLimited(ms, true)
	wantNoDeadline(t, s)
	s.SetAmplificationLimited(2*ms, false)
	wantDeadline(t, s, 999*ms)
	ack(t, s, 100*ms, SpaceInitial, 0, rng(0, 0))
	wantNoDeadline(t, s)
}

// MaxPTO caps the backoff; MinPTO floors the period.
func TestPTOBounds(t *testing.T) {
	cfg := testConfig(NewReno)
	cfg.MaxPTO = 3 * time.Second
	s := confirmed(t, cfg)
	send(t, s, 0, SpaceApplication, 0)
	for range 5 {
		d, _ := s.Deadline()
		s.OnTimeout(d)
	}
	if s.PTOCount() != 5 {
		t.Fatalf("pto count %d", s.PTOCount())
	}
	wantDeadline(t, s, 3*time.Second)

	cfg = testConfig(NewReno)
	cfg.MinPTO = 2 * time.Second
	s = confirmed(t, cfg)
	send(t, s, 0, SpaceApplication, 0)
	wantDeadline(t, s, 2*time.Second)
}

// The loss timer takes precedence over the PTO.
func TestLossTimerBeforePTO(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 58*ms, SpaceApplication, 0)
	send(t, s, 60*ms, SpaceApplication, 1)
	ack(t, s, 100*ms, SpaceApplication, 0, rng(1, 1))
	// Sample 40 ms: loss delay 45 ms. Packet 0 would be lost at 58 + 45
	// ms, before its PTO at 60 + 40 + 80 + 25 ms.
	wantDeadline(t, s, 103*ms)
}
