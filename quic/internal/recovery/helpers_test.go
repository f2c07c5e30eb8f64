package recovery

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

const ms = time.Millisecond

// testConfig is DefaultConfig with pacing, HyStart++ and the long-RTT
// slow start off, so that tests of loss detection and windows do not
// depend on them.
func testConfig(alg Algorithm) Config {
	cfg := DefaultConfig()
	cfg.Algorithm = alg
	cfg.Pacing.Disabled = true
	cfg.HyStart.Disabled = true
	cfg.LongRTT.Disabled = true
	return cfg
}

func newSender(t testing.TB, cfg Config) *Sender {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// confirmed returns a Sender whose handshake is confirmed, for tests of
// the application space.
func confirmed(t testing.TB, cfg Config) *Sender {
	s := newSender(t, cfg)
	s.ConfirmHandshake(0)
	return s
}

func send(t testing.TB, s *Sender, now time.Duration, space Space, pn uint64) {
	t.Helper()
	if err := s.OnPacketSent(now, SentPacket{Space: space, Number: pn, Bytes: 1200, AckEliciting: true, InFlight: true, Ref: pn + 1000}); err != nil {
		t.Fatal(err)
	}
}

// rng builds descending ACK ranges from pairs given as smallest, largest,
// highest range first.
func rng(pairs ...uint64) []wire.AckRange {
	out := make([]wire.AckRange, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, wire.AckRange{Smallest: pairs[i], Largest: pairs[i+1]})
	}
	return out
}

func ack(t testing.TB, s *Sender, now time.Duration, space Space, delay time.Duration, ranges []wire.AckRange) *Result {
	t.Helper()
	res, err := s.OnAck(now, space, &Ack{Ranges: ranges, Delay: delay})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func numbers(ps []PacketInfo) []uint64 {
	out := make([]uint64, len(ps))
	for i, p := range ps {
		out[i] = p.Number
	}
	return out
}

func equalNumbers(a []PacketInfo, want ...uint64) bool {
	if len(a) != len(want) {
		return false
	}
	for i := range a {
		if a[i].Number != want[i] {
			return false
		}
	}
	return true
}

func wantDeadline(t testing.TB, s *Sender, want time.Duration) {
	t.Helper()
	got, ok := s.Deadline()
	if !ok {
		t.Fatalf("timer not armed, want %v", want)
	}
	if got != want {
		t.Fatalf("deadline %v, want %v", got, want)
	}
}

func wantNoDeadline(t testing.TB, s *Sender) {
	t.Helper()
	if got, ok := s.Deadline(); ok {
		t.Fatalf("timer armed at %v, want none", got)
	}
}
