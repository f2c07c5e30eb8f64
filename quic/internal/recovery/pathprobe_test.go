package recovery

import (
	"errors"
	"testing"
	"time"
)

// recordingObserver keeps the numbers the Sender reports.
type recordingObserver struct{ acked, lost []PacketInfo }

func (o *recordingObserver) PacketAcked(p PacketInfo) { o.acked = append(o.acked, p) }
func (o *recordingObserver) PacketLost(p PacketInfo)  { o.lost = append(o.lost, p) }

// A lost path MTU probe leaves bytes in flight but is no congestion signal
// (RFC 9000 section 14.4); the same loss of an ordinary packet is one.
func TestPathProbeLossIsNoCongestion(t *testing.T) {
	for _, probe := range []bool{true, false} {
		s := confirmed(t, testConfig(NewReno))
		obs := &recordingObserver{}
		s.SetPacketObserver(obs)
		if err := s.OnPacketSent(0, SentPacket{Space: SpaceApplication, Number: 0, Bytes: 1452, AckEliciting: true, InFlight: true}); err != nil {
			t.Fatal(err)
		}
		if probe {
			if err := s.MarkPathProbe(SpaceApplication, 0); err != nil {
				t.Fatal(err)
			}
		}
		for pn := uint64(1); pn <= 4; pn++ {
			send(t, s, time.Duration(pn)*ms, SpaceApplication, pn)
		}
		window := s.CongestionWindow()
		res := ack(t, s, 100*ms, SpaceApplication, 0, rng(1, 4))
		if !equalNumbers(res.Lost, 0) || res.Lost[0].PathProbe != probe {
			t.Fatalf("probe=%v: lost %+v", probe, res.Lost)
		}
		if s.BytesInFlight() != 0 {
			t.Errorf("probe=%v: %d bytes in flight after everything resolved", probe, s.BytesInFlight())
		}
		signals := s.Stats().CongestionSignals
		if probe && (signals != 0 || s.CongestionWindow() < window) {
			t.Errorf("lost probe: %d congestion signals, window %d from %d", signals, s.CongestionWindow(), window)
		}
		if !probe && (signals != 1 || s.CongestionWindow() >= window+4*1200) {
			t.Errorf("lost packet: %d congestion signals, window %d from %d", signals, s.CongestionWindow(), window)
		}
		if !equalNumbers(obs.lost, 0) || !equalNumbers(obs.acked, 1, 2, 3, 4) {
			t.Errorf("observer saw acked %v lost %v", numbers(obs.acked), numbers(obs.lost))
		}
	}
}

// A probe lost with other packets counts neither toward persistent
// congestion (RFC 9002 section 7.6.2) nor in the lost bytes of the event.
func TestPathProbeNotPersistentCongestion(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	send(t, s, 0, SpaceApplication, 0)
	ack(t, s, 100*ms, SpaceApplication, 0, rng(0, 0))
	// A probe, then long after it an ordinary packet, nothing in between,
	// then a packet that is acknowledged: the two losses span more than
	// the persistent congestion duration, but only one is congestion.
	send(t, s, 200*ms, SpaceApplication, 1)
	if err := s.MarkPathProbe(SpaceApplication, 1); err != nil {
		t.Fatal(err)
	}
	send(t, s, 1900*ms, SpaceApplication, 2)
	send(t, s, 2001*ms, SpaceApplication, 3)
	res := ack(t, s, 2101*ms, SpaceApplication, 0, rng(3, 3))
	if !equalNumbers(res.Lost, 1, 2) {
		t.Fatalf("lost %v, want [1 2]", numbers(res.Lost))
	}
	st := s.Stats()
	if res.PersistentCongestion || st.PersistentCongestions != 0 || st.CongestionSignals != 1 {
		t.Errorf("persistent=%v, stats %+v", res.PersistentCongestion, st)
	}
	if s.cev.LostBytes != 1200 {
		t.Errorf("congestion event lost %d bytes, want 1200", s.cev.LostBytes)
	}
}

func TestMarkPathProbeErrors(t *testing.T) {
	s := confirmed(t, testConfig(NewReno))
	if err := s.MarkPathProbe(SpaceApplication, 0); !errors.Is(err, ErrInvalidPacket) {
		t.Errorf("unsent packet: %v", err)
	}
	if err := s.OnPacketSent(0, SentPacket{Space: SpaceApplication, Number: 0, Bytes: 40}); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkPathProbe(SpaceApplication, 0); !errors.Is(err, ErrInvalidPacket) {
		t.Errorf("ACK-only packet: %v", err)
	}
	if err := s.MarkPathProbe(Space(9), 0); !errors.Is(err, ErrInvalidSpace) {
		t.Errorf("bad space: %v", err)
	}
}
