package crypto

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"
)

func newTestPathStateSealer(t testing.TB, keyByte byte) *PathStateSealer {
	t.Helper()
	s, err := NewPathStateSealer(bytes.Repeat([]byte{keyByte}, PathStateKeyLen))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testPathState(addr string) PathState {
	return PathState{
		IssuedAt: issued, Lifetime: time.Hour, Cwnd: 4_062_500, RTT: 650 * time.Millisecond,
		Addr: netip.MustParseAddr(addr),
	}
}

func sealTestState(t *testing.T, s *PathStateSealer, st PathState) []byte {
	t.Helper()
	b, err := s.Seal(nil, st, newSeededReader(7))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != PathStateSealedLen {
		t.Fatalf("sealed %d bytes, want %d", len(b), PathStateSealedLen)
	}
	return b
}

func TestPathStateRoundTrip(t *testing.T) {
	s := newTestPathStateSealer(t, 1)
	for _, addr := range []string{"192.0.2.7", "2001:db8:1:2::7", "::ffff:198.51.100.1"} {
		st := testPathState(addr)
		b := sealTestState(t, s, st)
		got, err := s.Open(b, st.Addr, issued.Add(time.Minute))
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if !got.IssuedAt.Equal(st.IssuedAt) || got.Lifetime != st.Lifetime || got.Cwnd != st.Cwnd || got.RTT != st.RTT {
			t.Errorf("%s: got %+v, want %+v", addr, got, st)
		}
		if bytes.Contains(b, []byte{0x00, 0x3d, 0xfd, 0x24}) { // 4_062_500
			t.Errorf("%s: the congestion window shows in the clear", addr)
		}
	}
}

// TestPathStateIPv6Prefix: an IPv6 state holds for the client's /64, as
// its addresses change within it, and for no other prefix.
func TestPathStateIPv6Prefix(t *testing.T) {
	s := newTestPathStateSealer(t, 1)
	b := sealTestState(t, s, testPathState("2001:db8:1:2::7"))
	if _, err := s.Open(b, netip.MustParseAddr("2001:db8:1:2:aaaa::1"), issued); err != nil {
		t.Errorf("same /64: %v", err)
	}
	if _, err := s.Open(b, netip.MustParseAddr("2001:db8:1:3::7"), issued); !errors.Is(err, ErrPathStateAddress) {
		t.Errorf("other /64: %v", err)
	}
}

func TestPathStateRejected(t *testing.T) {
	s := newTestPathStateSealer(t, 1)
	st := testPathState("192.0.2.7")
	b := sealTestState(t, s, st)
	addr := st.Addr
	cases := []struct {
		name   string
		sealed []byte
		sealer *PathStateSealer
		addr   netip.Addr
		now    time.Time
		want   error
	}{
		{"wrong key", b, newTestPathStateSealer(t, 2), addr, issued, ErrPathStateInvalid},
		{"other address", b, s, netip.MustParseAddr("192.0.2.8"), issued, ErrPathStateAddress},
		{"expired", b, s, addr, issued.Add(time.Hour + time.Millisecond), ErrPathStateExpired},
		{"from the future", b, s, addr, issued.Add(-PathStateSkew - time.Second), ErrPathStateExpired},
		{"other format", append([]byte{2}, b[1:]...), s, addr, issued, ErrPathStateVersion},
		{"truncated", b[:len(b)-1], s, addr, issued, ErrPathStateInvalid},
		{"extended", append(append([]byte(nil), b...), 0), s, addr, issued, ErrPathStateInvalid},
		{"empty", nil, s, addr, issued, ErrPathStateInvalid},
	}
	for _, c := range cases {
		if _, err := c.sealer.Open(c.sealed, c.addr, c.now); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	// Any altered bit, in the nonce, the fields or the tag, fails.
	for i := 1; i < len(b); i++ {
		for _, bit := range []byte{0x01, 0x80} {
			alt := append([]byte(nil), b...)
			alt[i] ^= bit
			if _, err := s.Open(alt, addr, issued); !errors.Is(err, ErrPathStateInvalid) {
				t.Fatalf("byte %d bit %x altered: %v", i, bit, err)
			}
		}
	}
}

func TestPathStateSealErrors(t *testing.T) {
	s := newTestPathStateSealer(t, 1)
	good := testPathState("192.0.2.7")
	bad := []PathState{good, good, good, good, good}
	bad[0].Lifetime = 0
	bad[1].Lifetime = MaxPathStateLifetime + time.Millisecond
	bad[2].Cwnd = 0
	bad[3].RTT = 0
	bad[4].Addr = netip.Addr{}
	for i, st := range bad {
		if b, err := s.Seal([]byte{9}, st, newSeededReader(1)); !errors.Is(err, ErrPathStateInvalid) || len(b) != 1 {
			t.Errorf("case %d: %x, %v", i, b, err)
		}
	}
	if b, err := s.Seal([]byte{9}, good, failingReader{}); err == nil || len(b) != 1 {
		t.Errorf("no entropy: %x, %v", b, err)
	}
	if _, err := NewPathStateSealer(make([]byte, 16)); err == nil {
		t.Error("a 16-byte key was taken")
	}
}

func FuzzPathStateOpen(f *testing.F) {
	s := newTestPathStateSealer(f, 1)
	b, err := s.Seal(nil, testPathState("192.0.2.7"), newSeededReader(3))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, sealed []byte) {
		st, err := s.Open(sealed, netip.MustParseAddr("192.0.2.7"), issued)
		if err == nil && !bytes.Equal(sealed, b) {
			t.Fatalf("a state nobody sealed opened: %+v", st)
		}
	})
}
