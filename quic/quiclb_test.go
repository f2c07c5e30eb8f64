package quic

import (
	"bytes"
	"crypto/rand"
	mrand "math/rand/v2"
	"testing"
)

func TestQUICLBRoundTrip(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(1, 2))
	for range 500 {
		sid := make([]byte, 1+rng.IntN(quicLBMaxServerIDLen))
		for i := range sid {
			sid[i] = byte(rng.Uint32())
		}
		maxNonce := min(quicLBMaxNonceLen, 19-len(sid))
		q := QUICLB{
			ConfigID:     uint8(rng.IntN(7)),
			ServerID:     sid,
			NonceLength:  quicLBMinNonceLen + rng.IntN(maxNonce-quicLBMinNonceLen+1),
			EncodeLength: rng.IntN(2) == 0,
		}
		if err := q.validate(); err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		id := make([]byte, q.Len())
		if err := q.encode(id, rand.Reader); err != nil {
			t.Fatal(err)
		}
		d, err := DecodeQUICLB(id, len(sid))
		if err != nil {
			t.Fatalf("%x: %v", id, err)
		}
		if d.ConfigID != q.ConfigID || !bytes.Equal(d.ServerID, sid) || len(d.Nonce) != q.NonceLength {
			t.Fatalf("%+v encoded %x decoded as %+v", q, id, d)
		}
		if q.EncodeLength && int(d.LengthBits) != len(id)-1 {
			t.Fatalf("length bits %d for %d octets", d.LengthBits, len(id))
		}
	}
}

// TestQUICLBLayout checks one connection ID octet by octet against the
// draft's layout: config rotation bits, self-encoded length, server ID,
// nonce.
func TestQUICLBLayout(t *testing.T) {
	q := QUICLB{ConfigID: 5, ServerID: []byte{0x31, 0x44, 0x1a}, NonceLength: 4, EncodeLength: true}
	id := make([]byte, q.Len())
	nonce := bytes.NewReader([]byte{0xff, 0xff, 0xff, 0xff, 0xa1, 0xa2, 0xa3, 0xa4})
	if err := q.encode(id, nonce); err != nil {
		t.Fatal(err)
	}
	want := []byte{5<<5 | 7, 0x31, 0x44, 0x1a, 0xa1, 0xa2, 0xa3, 0xa4}
	if !bytes.Equal(id, want) {
		t.Fatalf("connection ID %x, want %x", id, want)
	}
}

func TestQUICLBDefaultsAndLimits(t *testing.T) {
	if n := (&QUICLB{ServerID: []byte{1, 2}}).Len(); n != DefaultConnectionIDLength {
		t.Errorf("2-octet server ID: %d-octet connection IDs, want %d", n, DefaultConnectionIDLength)
	}
	if n := (&QUICLB{ServerID: make([]byte, 6)}).Len(); n != 11 {
		t.Errorf("6-octet server ID: %d-octet connection IDs, want 11 (a nonce of 4)", n)
	}
	for _, q := range []QUICLB{
		{ConfigID: 7, ServerID: []byte{1}},
		{ServerID: nil},
		{ServerID: make([]byte, 16)},
		{ServerID: []byte{1}, NonceLength: 3},
		{ServerID: []byte{1}, NonceLength: 19},
		{ServerID: make([]byte, 15), NonceLength: 5},
	} {
		if err := q.validate(); err == nil {
			t.Errorf("%+v: no error", q)
		}
	}
}

func TestDecodeQUICLBRefuses(t *testing.T) {
	cases := []struct {
		id    []byte
		sidLn int
	}{
		{[]byte{0xe0, 1, 2, 3, 4, 5, 6, 7}, 2}, // config rotation 0b111
		{[]byte{0x20, 1, 2, 3, 4, 5}, 2},       // no room for a 4-octet nonce
		{[]byte{0x20, 1, 2, 3, 4, 5, 6, 7}, 0},
		{[]byte{0x20, 1, 2, 3, 4, 5, 6, 7}, 16},
		{make([]byte, 21), 2},
		{nil, 1},
	}
	for _, c := range cases {
		if d, err := DecodeQUICLB(c.id, c.sidLn); err == nil {
			t.Errorf("%x with a %d-octet server ID decoded as %+v", c.id, c.sidLn, d)
		}
	}
}

// TestDecodeQUICLBTruncated decodes every prefix of a valid connection ID.
func TestDecodeQUICLBTruncated(t *testing.T) {
	id := []byte{0x47, 0xaa, 0xbb, 1, 2, 3, 4, 5}
	for n := range len(id) + 1 {
		d, err := DecodeQUICLB(id[:n], 2)
		if (err == nil) != (n >= 7) {
			t.Fatalf("prefix of %d octets: %+v, %v", n, d, err)
		}
	}
}

func FuzzDecodeQUICLB(f *testing.F) {
	f.Add([]byte{0x47, 0xaa, 0xbb, 1, 2, 3, 4, 5}, 2)
	f.Add([]byte{0xe7, 0xaa, 0xbb, 1, 2, 3, 4, 5}, 2)
	f.Add([]byte{}, 1)
	f.Add(make([]byte, 20), 15)
	f.Fuzz(func(t *testing.T, id []byte, sidLen int) {
		d, err := DecodeQUICLB(id, sidLen)
		if err != nil {
			return
		}
		if len(d.ServerID) != sidLen || 1+len(d.ServerID)+len(d.Nonce) != len(id) {
			t.Fatalf("%x split as %+v", id, d)
		}
		if d.ConfigID == quicLBUnroutable || len(d.Nonce) < quicLBMinNonceLen {
			t.Fatalf("%x accepted as %+v", id, d)
		}
	})
}

// TestConnIDSchemeNamesSocket checks that the connection IDs of a group's
// sockets carry the socket's index where the steering program reads it,
// and QUIC-LB's fields intact.
func TestConnIDSchemeNamesSocket(t *testing.T) {
	lb := &QUICLB{ConfigID: 1, ServerID: []byte{9, 8}, NonceLength: 5}
	for _, s := range []connIDScheme{
		{sockets: 3, offset: 0},
		{lb: lb, sockets: 3, offset: 3},
		{lb: lb, sockets: 1, offset: 3},
	} {
		n := DefaultConnectionIDLength
		if s.lb != nil {
			n = s.lb.Len()
		}
		for sock := range s.sockets {
			gen := s.generator(sock)
			for range 200 {
				id := make([]byte, n)
				if err := gen(id, rand.Reader); err != nil {
					t.Fatal(err)
				}
				if got := int(id[s.offset]) % s.sockets; got != sock {
					t.Fatalf("socket %d issued %x, which names socket %d", sock, id, got)
				}
				if s.lb == nil {
					continue
				}
				d, err := DecodeQUICLB(id, len(lb.ServerID))
				if err != nil || d.ConfigID != 1 || !bytes.Equal(d.ServerID, lb.ServerID) {
					t.Fatalf("%x: %+v, %v", id, d, err)
				}
			}
		}
	}
	if (connIDScheme{sockets: 1}).generator(0) != nil {
		t.Error("one socket without QUIC-LB should keep the core's random IDs")
	}
}

func TestSocketOctet(t *testing.T) {
	for n := 1; n <= MaxSockets; n++ {
		for idx := range n {
			for r := range 256 {
				if v := socketOctet(byte(r), idx, n); int(v)%n != idx {
					t.Fatalf("n %d, index %d, random %d: octet %d", n, idx, r, v)
				}
			}
		}
	}
}
