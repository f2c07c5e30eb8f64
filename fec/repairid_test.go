package fec

import (
	"bytes"
	"errors"
	"testing"
)

func TestRepairIDRoundTrip(t *testing.T) {
	ids := []RepairID{
		{Key: 0, DT: 0, NSS: 1, FirstESI: 0},
		{Key: 0xFFFF, DT: 15, NSS: MaxNSS, FirstESI: 0xFFFFFFFF},
		{Key: 0x1234, DT: 7, NSS: 200, FirstESI: 0xFFFFFF9C},
	}
	for _, id := range ids {
		wire := id.Append([]byte{0xAA})
		if len(wire) != 1+RepairIDLen || wire[0] != 0xAA {
			t.Fatalf("%+v: Append gave %x", id, wire)
		}
		got, err := ParseRepairID(wire[1:])
		if err != nil {
			t.Fatalf("%+v: %v", id, err)
		}
		if got != id {
			t.Fatalf("round trip: got %+v, want %+v", got, id)
		}
	}
}

func TestRepairIDWireLayout(t *testing.T) {
	id := RepairID{Key: 0x0102, DT: 0xA, NSS: 0xBCD, FirstESI: 0x11223344}
	want := []byte{0x01, 0x02, 0xAB, 0xCD, 0x11, 0x22, 0x33, 0x44}
	if got := id.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
}

func TestParseRepairIDTruncated(t *testing.T) {
	wire := RepairID{Key: 9, DT: 15, NSS: 30, FirstESI: 77}.Append(nil)
	for n := range RepairIDLen {
		if _, err := ParseRepairID(wire[:n]); !errors.Is(err, ErrShortRepairID) {
			t.Fatalf("%d-byte prefix: got %v, want ErrShortRepairID", n, err)
		}
	}
	// Trailing bytes (the coded symbol) are not part of the ID.
	if _, err := ParseRepairID(append(wire, 1, 2, 3)); err != nil {
		t.Fatalf("with trailing data: %v", err)
	}
}

func TestParseRepairIDZeroNSS(t *testing.T) {
	wire := []byte{0, 1, 0xF0, 0x00, 0, 0, 0, 5} // DT 15, NSS 0
	if _, err := ParseRepairID(wire); !errors.Is(err, ErrBadNSS) {
		t.Fatalf("got %v, want ErrBadNSS", err)
	}
}

func TestRepairIDValidate(t *testing.T) {
	cases := []struct {
		id   RepairID
		want error
	}{
		{RepairID{DT: 15, NSS: 1}, nil},
		{RepairID{DT: 16, NSS: 1}, ErrBadDT},
		{RepairID{DT: 3, NSS: 0}, ErrBadNSS},
		{RepairID{DT: 3, NSS: MaxNSS + 1}, ErrBadNSS},
	}
	for _, c := range cases {
		err := c.id.Validate()
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%+v: got %v, want %v", c.id, err, c.want)
		}
	}
}

func TestESIBeforeWraps(t *testing.T) {
	cases := []struct {
		a, b uint32
		want bool
	}{
		{1, 2, true},
		{2, 1, false},
		{5, 5, false},
		{0xFFFFFFFF, 0, true},
		{0, 0xFFFFFFFF, false},
		{0xFFFFFF00, 0x10, true},
	}
	for _, c := range cases {
		if got := esiBefore(c.a, c.b); got != c.want {
			t.Errorf("esiBefore(%#x, %#x) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
