package recovery

import (
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

func TestConfigValidation(t *testing.T) {
	if err := (&Config{}).Validate(); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("zero config: %v", err)
	}
	def := DefaultConfig()
	if err := def.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Config){
		"probes":        func(c *Config) { c.PTOProbes = 3 },
		"time thresh":   func(c *Config) { c.TimeThresholdNum, c.TimeThresholdDen = 7, 8 },
		"datagram":      func(c *Config) { c.MaxDatagramSize = 1000 },
		"max window":    func(c *Config) { c.MaxWindow = 100 },
		"algorithm":     func(c *Config) { c.Algorithm = 9 },
		"pacing factor": func(c *Config) { c.Pacing.Factor = 0.5 },
		"hystart":       func(c *Config) { c.HyStart.MaxRTTThresh = time.Millisecond },
		"max pto":       func(c *Config) { c.MaxPTO = 0 },
	} {
		c := DefaultConfig()
		mod(&c)
		if _, err := New(c); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// RFC 9002 section 7.2: min(10 * mds, max(14720, 2 * mds)).
func TestInitialWindow(t *testing.T) {
	for _, tc := range []struct{ mds, want int }{{1200, 12000}, {1500, 14720}, {9000, 18000}} {
		c := DefaultConfig()
		if got := c.initialWindow(tc.mds); got != tc.want {
			t.Errorf("mds %d: %d, want %d", tc.mds, got, tc.want)
		}
	}
}

func TestSentPacketErrors(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 5)
	for name, p := range map[string]SentPacket{
		"repeat":       {Space: SpaceApplication, Number: 5, Bytes: 1200, InFlight: true},
		"decrease":     {Space: SpaceApplication, Number: 4, Bytes: 1200, InFlight: true},
		"huge gap":     {Space: SpaceApplication, Number: 5000, Bytes: 1200, InFlight: true},
		"not flying":   {Space: SpaceApplication, Number: 6, Bytes: 1200, AckEliciting: true},
		"empty":        {Space: SpaceApplication, Number: 6, InFlight: true},
		"space":        {Space: 3, Number: 6, Bytes: 1200},
		"too large":    {Space: SpaceApplication, Number: 6, Bytes: 70000},
		"first gap":    {Space: SpaceHandshake, Number: 2000, Bytes: 1200},
		"negative len": {Space: SpaceApplication, Number: 6, Bytes: -1},
	} {
		if err := s.OnPacketSent(ms, p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if s.BytesInFlight() != 1200 || s.Stats().PacketsSent != 1 {
		t.Fatal("a rejected packet changed the state")
	}
}

func TestAckErrors(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	for _, pn := range []uint64{0, 1, 3, 4} { // 2 is skipped
		send(t, s, 0, SpaceApplication, pn)
	}
	for name, tc := range map[string]struct {
		ranges []wire.AckRange
		want   error
	}{
		"empty":      {nil, ErrInvalidAck},
		"inverted":   {rng(4, 3), ErrInvalidAck},
		"adjacent":   {rng(3, 4, 0, 2), ErrInvalidAck},
		"ascending":  {rng(0, 0, 3, 4), ErrInvalidAck},
		"unsent":     {rng(3, 5), ErrAckOfUnsentPacket},
		"skipped":    {rng(2, 4), ErrAckOfUnsentPacket},
		"skipped lo": {rng(4, 4, 0, 2), ErrAckOfUnsentPacket},
	} {
		if _, err := s.OnAck(ms, SpaceApplication, &Ack{Ranges: tc.ranges}); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if s.BytesInFlight() != 4*1200 {
		t.Fatal("a rejected ACK changed the state")
	}
	if _, err := s.OnAck(ms, SpaceHandshake, &Ack{Ranges: rng(0, 0)}); !errors.Is(err, ErrAckOfUnsentPacket) {
		t.Errorf("ACK in a space with nothing sent: %v", err)
	}
	res := ack(t, s, 100*ms, SpaceApplication, 0, rng(3, 4, 0, 1))
	if !equalNumbers(res.Acked, 0, 1, 3, 4) || len(res.Lost) != 0 || s.BytesInFlight() != 0 {
		t.Fatalf("acked %v lost %v", numbers(res.Acked), numbers(res.Lost))
	}
	if n := s.spaces[SpaceApplication].ring.len(); n != 0 {
		t.Fatalf("%d records left after everything was acknowledged", n)
	}
}

// Discarding a space's keys removes its packets from bytes in flight
// without declaring them lost (RFC 9002 section 6.4).
func TestDiscardSpace(t *testing.T) {
	s := newSender(t, testConfig(NewReno))
	send(t, s, 0, SpaceInitial, 0)
	send(t, s, 0, SpaceInitial, 1)
	s.SetHandshakeKeys(ms)
	send(t, s, ms, SpaceHandshake, 0)
	res, err := s.DiscardSpace(2*ms, SpaceInitial)
	if err != nil {
		t.Fatal(err)
	}
	if !equalNumbers(res.Discarded, 0, 1) || res.Discarded[1].Ref != 1001 || len(res.Lost) != 0 {
		t.Fatalf("discarded %v lost %v", numbers(res.Discarded), numbers(res.Lost))
	}
	if s.BytesInFlight() != 1200 || s.Stats().PacketsLost != 0 {
		t.Fatalf("in flight %d", s.BytesInFlight())
	}
	if err := s.OnPacketSent(3*ms, SentPacket{Space: SpaceInitial, Number: 2, Bytes: 1200, InFlight: true}); !errors.Is(err, ErrSpaceDiscarded) {
		t.Fatalf("send after discard: %v", err)
	}
	if _, err := s.OnAck(3*ms, SpaceInitial, &Ack{Ranges: rng(0, 1)}); !errors.Is(err, ErrSpaceDiscarded) {
		t.Fatalf("ACK after discard: %v", err)
	}
	if _, err := s.DiscardSpace(3*ms, SpaceApplication); !errors.Is(err, ErrInvalidSpace) {
		t.Fatalf("discard application: %v", err)
	}
	// The Handshake packet's PTO remains: 1 + 999 ms.
	wantDeadline(t, s, 1000*ms)
}

// Rejected 0-RTT: the packets below the first 1-RTT packet are discarded.
func TestDiscardPackets(t *testing.T) {
	s := newSender(t, testConfig(NewReno))
	sendN(t, s, 0, 0, 5)
	res, err := s.DiscardPackets(ms, SpaceApplication, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !equalNumbers(res.Discarded, 0, 1, 2) || s.BytesInFlight() != 2*1200 {
		t.Fatalf("discarded %v in flight %d", numbers(res.Discarded), s.BytesInFlight())
	}
	res = ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 4))
	if !equalNumbers(res.Acked, 3, 4) {
		t.Fatalf("acked %v", numbers(res.Acked))
	}
}

// Records of lost packets are forgotten one PTO period after the loss, so
// the ring does not grow with the connection's history.
func TestLostRecordsExpire(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	sendN(t, s, 0, 0, 5)
	if res := ack(t, s, 100*ms, SpaceApplication, 0, rng(1, 4)); !equalNumbers(res.Lost, 0) {
		t.Fatalf("lost %v", numbers(res.Lost))
	}
	sp := &s.spaces[SpaceApplication]
	// Watch: 100 + 4*50 + 25 = 325 ms after the loss at 100 ms.
	sendN(t, s, 200*ms, 5, 1)
	ack(t, s, 424*ms, SpaceApplication, 0, rng(1, 5))
	if sp.ring.len() != 6 {
		t.Fatalf("ring %d before the watch expired, want 6", sp.ring.len())
	}
	sendN(t, s, 424*ms, 6, 1)
	ack(t, s, 500*ms, SpaceApplication, 0, rng(1, 6))
	if sp.ring.len() != 0 || len(sp.holes) != 0 {
		t.Fatalf("ring %d holes %d after the watch", sp.ring.len(), len(sp.holes))
	}
	// A very late ACK of an expired loss is ignored.
	res := ack(t, s, 600*ms, SpaceApplication, 0, rng(0, 6))
	if len(res.Acked)+len(res.LateAcked) != 0 {
		t.Fatal("expired records acknowledged")
	}
}

// Delivery-rate samples (draft-cheng-iccrg-delivery-rate-estimation).
func TestRateSample(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	sendN(t, s, 0, 0, 10)
	ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 9))
	rs := s.ev.Rate
	// 12000 bytes over max(send 0, ack 100 ms): 120000 B/s.
	if !rs.Valid || rs.Delivered != 12000 || rs.Interval != 100*ms || rs.DeliveryRate != 120000 || rs.IsAppLimited {
		t.Fatalf("sample %+v", rs)
	}
	// A flight sent over 50 ms from 100 ms, acknowledged from 250 ms to
	// 260 ms. For its last packet: delivered 18000 - 12000 bytes; send
	// elapsed 150 - 100 ms; ack elapsed 260 ms minus the delivery time
	// when it was sent, 100 ms. The longer, 160 ms, gives 37500 B/s.
	for i := range uint64(5) {
		send(t, s, 100*ms+time.Duration(i)*12500*time.Microsecond, SpaceApplication, 10+i)
	}
	for i := range uint64(5) {
		ack(t, s, 250*ms+time.Duration(i)*2500*time.Microsecond, SpaceApplication, 0, rng(0, 10+i))
	}
	rs = s.ev.Rate
	if rs.Delivered != 6000 || rs.SendElapsed != 50*ms || rs.AckElapsed != 160*ms || rs.Interval != 160*ms || rs.DeliveryRate != 37500 || rs.RTT != 110*ms {
		t.Fatalf("sample %+v", rs)
	}
	send(t, s, 260*ms, SpaceApplication, 15)
	send(t, s, 260*ms, SpaceApplication, 16)
	ack(t, s, 360*ms, SpaceApplication, 0, rng(0, 16))
	// Application limited: the mark holds until the data in flight is
	// delivered.
	s.SetAppLimited()
	send(t, s, 400*ms, SpaceApplication, 17)
	ack(t, s, 500*ms, SpaceApplication, 0, rng(0, 17))
	if !s.ev.Rate.IsAppLimited {
		t.Fatal("sample not marked application limited")
	}
	send(t, s, 500*ms, SpaceApplication, 18)
	ack(t, s, 600*ms, SpaceApplication, 0, rng(0, 18))
	if s.ev.Rate.IsAppLimited {
		t.Fatal("application-limited mark outlived its data")
	}
}

// A sample whose interval is shorter than min_rtt gives no rate (section
// 3.3 of the draft): it would overestimate the path.
func TestRateSampleBelowMinRTT(t *testing.T) {
	for _, tc := range []struct {
		minRTT time.Duration
		valid  bool
		rate   uint64
	}{{100 * ms, false, 0}, {40 * ms, true, 24000}} {
		var r rateSampler
		p := sentPacket{bytes: 1200}
		r.onSent(&p, 0, 0)
		r.begin()
		r.onDelivered(&p, 50*ms)
		rs := r.finish(tc.minRTT)
		if rs.Valid != tc.valid || rs.DeliveryRate != tc.rate || rs.Interval != 50*ms {
			t.Fatalf("min_rtt %v: %+v", tc.minRTT, rs)
		}
	}
}

// The peer's max_ack_delay enters the application PTO (RFC 9002 section
// 6.2.1).
func TestSetPeerMaxAckDelay(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	if err := s.SetPeerMaxAckDelay(0, -ms); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("negative: %v", err)
	}
	if err := s.SetPeerMaxAckDelay(0, 100*ms); err != nil {
		t.Fatal(err)
	}
	send(t, s, 0, SpaceApplication, 0)
	wantDeadline(t, s, 1099*ms)
}

func TestSetMaxDatagramSize(t *testing.T) {
	s := confirmed(t, testConfig(CUBIC))
	if err := s.SetMaxDatagramSize(1000); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("1000: %v", err)
	}
	if err := s.SetMaxDatagramSize(1500); err != nil {
		t.Fatal(err)
	}
	// 8 packets of 1500 bytes fill the 12000-byte window exactly.
	for pn := range uint64(8) {
		if !s.CanSend() {
			t.Fatalf("blocked after %d packets", pn)
		}
		if err := s.OnPacketSent(0, SentPacket{Space: SpaceApplication, Number: pn, Bytes: 1500, AckEliciting: true, InFlight: true}); err != nil {
			t.Fatal(err)
		}
	}
	if s.CanSend() || s.SendWindow() != 0 || !s.InSlowStart() {
		t.Fatalf("can send %v window left %d", s.CanSend(), s.SendWindow())
	}
}
