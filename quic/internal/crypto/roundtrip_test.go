package crypto

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

var allSuites = []uint16{
	tls.TLS_AES_128_GCM_SHA256,
	tls.TLS_AES_256_GCM_SHA384,
	tls.TLS_CHACHA20_POLY1305_SHA256,
}

var allVersions = []Version{Version1, Version2}

// testSecret returns a reproducible traffic secret of the suite's hash
// length.
func testSecret(t testing.TB, suiteID uint16, seed uint64) []byte {
	t.Helper()
	s, err := lookupSuite(suiteID)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	b := make([]byte, s.hash().Size())
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// testPacket builds an unprotected packet: a Handshake-like long header
// or a short header with an 8-byte connection ID and a pnLen-byte packet
// number, then payloadLen random payload bytes. It leaves TagLen bytes of
// spare capacity.
func testPacket(r *rand.Rand, long bool, pnLen int, pn uint64, payloadLen int) (pkt []byte, pnOffset int) {
	pkt = make([]byte, 0, 64+payloadLen+TagLen)
	if long {
		pkt = append(pkt, 0xe0|byte(pnLen-1), 0, 0, 0, 1, 8)
		pkt = append(pkt, 1, 2, 3, 4, 5, 6, 7, 8, 0)
		length := pnLen + payloadLen + TagLen
		pkt = append(pkt, 0x40|byte(length>>8), byte(length))
	} else {
		pkt = append(pkt, 0x40|byte(pnLen-1), 8, 7, 6, 5, 4, 3, 2, 1)
	}
	pnOffset = len(pkt)
	for i := pnLen - 1; i >= 0; i-- {
		pkt = append(pkt, byte(pn>>(8*i)))
	}
	for range payloadLen {
		pkt = append(pkt, byte(r.Uint32()))
	}
	return pkt, pnOffset
}

// expandPN rebuilds a packet number from its truncated encoding when the
// test knows the full value's upper bits.
func expandPN(full, truncated uint64, pnLen int) uint64 {
	mask := uint64(1)<<(8*pnLen) - 1
	return full&^mask | truncated
}

// unprotect is the receive path: header protection, then the AEAD.
func unprotect(k *Keys, pkt []byte, pnOffset int, fullPN uint64) ([]byte, error) {
	pnLen, truncated, err := k.Header().Remove(pkt, pnOffset)
	if err != nil {
		return nil, err
	}
	return k.Packet().Open(pkt, pnOffset+pnLen, expandPN(fullPN, truncated, pnLen))
}

func forEachSuiteVersion(t *testing.T, f func(t *testing.T, suiteID uint16, v Version)) {
	for _, s := range allSuites {
		for _, v := range allVersions {
			t.Run(fmt.Sprintf("%s/%v", tls.CipherSuiteName(s), v), func(t *testing.T) { f(t, s, v) })
		}
	}
}

func TestRoundTrip(t *testing.T) {
	forEachSuiteVersion(t, func(t *testing.T, suiteID uint16, v Version) {
		seed := uint64(suiteID)<<32 | uint64(v)
		r := rand.New(rand.NewPCG(seed, 1))
		secret := testSecret(t, suiteID, seed)
		tx, err := New(suiteID, secret, v)
		if err != nil {
			t.Fatal(err)
		}
		rx, err := New(suiteID, secret, v)
		if err != nil {
			t.Fatal(err)
		}
		for _, long := range []bool{true, false} {
			for pnLen := 1; pnLen <= 4; pnLen++ {
				for _, size := range []int{4 - pnLen, 5, 100, 1200} {
					pn := r.Uint64N(MaxPacketNumber + 1)
					pkt, pnOffset := testPacket(r, long, pnLen, pn, size)
					plain := bytes.Clone(pkt)
					out, err := tx.Protect(pkt, pnOffset, pn)
					if err != nil {
						t.Fatalf("long=%v pnLen=%d size=%d: Protect: %v", long, pnLen, size, err)
					}
					if len(out) != len(plain)+TagLen {
						t.Fatalf("sealed %d bytes, want %d", len(out), len(plain)+TagLen)
					}
					payload, err := unprotect(rx, out, pnOffset, pn)
					if err != nil {
						t.Fatalf("long=%v pnLen=%d size=%d seed=%d: %v", long, pnLen, size, seed, err)
					}
					if !bytes.Equal(out[:len(plain)-size], plain[:len(plain)-size]) || !bytes.Equal(payload, plain[len(plain)-size:]) {
						t.Fatalf("long=%v pnLen=%d size=%d: round trip changed the packet", long, pnLen, size)
					}
				}
			}
		}
	})
}

// TestTamperedPacketsFail flips every bit of a protected packet, one at a
// time: header, packet number, ciphertext and tag are all authenticated.
func TestTamperedPacketsFail(t *testing.T) {
	forEachSuiteVersion(t, func(t *testing.T, suiteID uint16, v Version) {
		r := rand.New(rand.NewPCG(uint64(suiteID), uint64(v)))
		keys, err := New(suiteID, testSecret(t, suiteID, 7), v)
		if err != nil {
			t.Fatal(err)
		}
		for _, long := range []bool{true, false} {
			const pn = 0x1234567
			pkt, pnOffset := testPacket(r, long, 3, pn, 24)
			protected, err := keys.Protect(pkt, pnOffset, pn)
			if err != nil {
				t.Fatal(err)
			}
			for bit := range 8 * len(protected) {
				bad := bytes.Clone(protected)
				bad[bit/8] ^= 1 << (bit % 8)
				if _, err := unprotect(keys, bad, pnOffset, pn); !errors.Is(err, ErrAuthentication) {
					t.Fatalf("long=%v: flipping bit %d of byte %d: err %v, want ErrAuthentication", long, bit%8, bit/8, err)
				}
			}
			good := bytes.Clone(protected)
			if _, err := unprotect(keys, good, pnOffset, pn+1<<24); !errors.Is(err, ErrAuthentication) {
				t.Errorf("long=%v: wrong packet number opened: %v", long, err)
			}
		}
	})
}

// TestWrongKeysFail opens a packet with the other direction's keys and with
// another version's keys.
func TestWrongKeysFail(t *testing.T) {
	dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	c1, s1, err := NewInitial(dcid, Version1)
	if err != nil {
		t.Fatal(err)
	}
	c2, _, err := NewInitial(dcid, Version2)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	pkt, pnOffset := testPacket(r, true, 2, 9, 50)
	out, err := c1.Protect(pkt, pnOffset, 9)
	if err != nil {
		t.Fatal(err)
	}
	for name, k := range map[string]*Keys{"server keys": s1, "v2 keys": c2} {
		if _, err := unprotect(k, bytes.Clone(out), pnOffset, 9); !errors.Is(err, ErrAuthentication) {
			t.Errorf("%s opened a v1 client packet: %v", name, err)
		}
	}
}

// TestTruncatedPackets feeds every strict prefix of a protected packet to
// the receive path: each gives an error, none panics.
func TestTruncatedPackets(t *testing.T) {
	forEachSuiteVersion(t, func(t *testing.T, suiteID uint16, v Version) {
		keys, err := New(suiteID, testSecret(t, suiteID, 11), v)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(11, 11))
		pkt, pnOffset := testPacket(r, false, 4, 77, 30)
		out, err := keys.Protect(pkt, pnOffset, 77)
		if err != nil {
			t.Fatal(err)
		}
		for n := range len(out) {
			prefix := bytes.Clone(out[:n])
			if _, err := unprotect(keys, prefix, pnOffset, 77); err == nil {
				t.Fatalf("prefix of %d bytes opened", n)
			}
		}
	})
}

func TestShortAndBadInput(t *testing.T) {
	keys, err := New(tls.TLS_AES_128_GCM_SHA256, testSecret(t, tls.TLS_AES_128_GCM_SHA256, 1), Version1)
	if err != nil {
		t.Fatal(err)
	}
	hk, pk := keys.Header(), keys.Packet()
	buf := make([]byte, 40)
	cases := []struct {
		name string
		err  error
		call func() error
	}{
		{"sample past the end", ErrPacketTooShort, func() error { return hk.Apply(buf[:24], 5) }},
		{"sample one byte short", ErrPacketTooShort, func() error { _, _, err := hk.Remove(buf[:29], 10); return err }},
		{"pn offset zero", ErrBadOffset, func() error { return hk.Apply(buf, 0) }},
		{"pn offset negative", ErrBadOffset, func() error { _, _, err := hk.Remove(buf, -1); return err }},
		{"pn offset past the end", ErrBadOffset, func() error { return hk.Apply(buf, 40) }},
		{"empty packet", ErrBadOffset, func() error { _, _, err := hk.Remove(nil, 1); return err }},
		{"open: no room for tag", ErrPacketTooShort, func() error { _, err := pk.Open(buf[:20], 5, 0); return err }},
		{"open: header past end", ErrBadOffset, func() error { _, err := pk.Open(buf[:20], 21, 0); return err }},
		{"open: no header", ErrBadOffset, func() error { _, err := pk.Open(buf, 0, 0); return err }},
		{"open: packet number too large", ErrPacketNumber, func() error { _, err := pk.Open(buf, 5, MaxPacketNumber+1); return err }},
		{"seal: header past end", ErrBadOffset, func() error { _, err := pk.Seal(buf[:10], 11, 0); return err }},
		{"seal: packet number too large", ErrPacketNumber, func() error { _, err := pk.Seal(buf[:10], 5, 1<<62); return err }},
		{"protect: empty packet", ErrBadOffset, func() error { _, err := keys.Protect(nil, 1, 0); return err }},
		{"protect: too short for a sample", ErrPacketTooShort, func() error { _, err := keys.Protect(bytes.Clone(buf[:12]), 9, 0); return err }},
	}
	for _, c := range cases {
		if err := c.call(); !errors.Is(err, c.err) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.err)
		}
	}
}

// TestSampleOffset checks the sampling rule of RFC 9001 section 5.4.2 on
// its own example: a short header with an 8-byte connection ID samples
// bytes 13 to 28.
func TestSampleOffset(t *testing.T) {
	pkt := make([]byte, 29)
	for i := range pkt {
		pkt[i] = byte(i)
	}
	s, err := sample(pkt, 1+8)
	if err != nil {
		t.Fatal(err)
	}
	if s[0] != 13 || s[len(s)-1] != 28 {
		t.Errorf("sample spans bytes %d..%d, want 13..28", s[0], s[len(s)-1])
	}
	if _, err := sample(pkt[:28], 9); !errors.Is(err, ErrPacketTooShort) {
		t.Errorf("28-byte packet: err %v, want ErrPacketTooShort", err)
	}
}

// TestHeaderProtectionBits checks which first-byte bits the mask touches:
// the low 4 in a long header, the low 5 in a short one (section 5.4.1).
func TestHeaderProtectionBits(t *testing.T) {
	for _, suiteID := range allSuites {
		keys, err := New(suiteID, testSecret(t, suiteID, 5), Version1)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(5, 5))
		for _, long := range []bool{true, false} {
			keep := byte(0xe0)
			if long {
				keep = 0xf0
			}
			touched := byte(0)
			for range 64 {
				pkt, pnOffset := testPacket(r, long, 1, 1, 40)
				first := pkt[0]
				out, err := keys.Protect(pkt, pnOffset, 1)
				if err != nil {
					t.Fatal(err)
				}
				touched |= out[0] ^ first
			}
			if touched&keep != 0 || touched != ^keep {
				t.Errorf("%s long=%v: mask touched first-byte bits %08b, want exactly %08b", tls.CipherSuiteName(suiteID), long, touched, ^keep)
			}
		}
	}
}

func TestConstructorErrors(t *testing.T) {
	good := testSecret(t, tls.TLS_AES_128_GCM_SHA256, 1)
	if _, err := New(0x1305, good, Version1); !errors.Is(err, ErrUnknownSuite) {
		t.Errorf("TLS_AES_128_CCM_8_SHA256 (0x1305): err %v, want ErrUnknownSuite", err)
	}
	if _, err := New(tls.TLS_AES_128_GCM_SHA256, good, Version(0xff00001d)); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("draft version: err %v, want ErrUnknownVersion", err)
	}
	if _, err := New(tls.TLS_AES_256_GCM_SHA384, good, Version1); !errors.Is(err, ErrSecretLength) {
		t.Errorf("32-byte secret for SHA-384 suite: err %v, want ErrSecretLength", err)
	}
	if _, err := NewAppKeys(tls.TLS_AES_128_GCM_SHA256, good[:31], Version2); !errors.Is(err, ErrSecretLength) {
		t.Errorf("short secret: err %v, want ErrSecretLength", err)
	}
	if _, _, err := NewInitial(nil, Version(0)); !errors.Is(err, ErrUnknownVersion) {
		t.Errorf("version 0: err %v, want ErrUnknownVersion", err)
	}
}

func TestLimits(t *testing.T) {
	want := map[uint16][2]uint64{
		tls.TLS_AES_128_GCM_SHA256:       {1 << 23, 1 << 52},
		tls.TLS_AES_256_GCM_SHA384:       {1 << 23, 1 << 52},
		tls.TLS_CHACHA20_POLY1305_SHA256: {1 << 62, 1 << 36},
	}
	for id, w := range want {
		c, i, err := Limits(id)
		if err != nil || c != w[0] || i != w[1] {
			t.Errorf("%s: limits %d, %d, %v; want %d, %d", tls.CipherSuiteName(id), c, i, err, w[0], w[1])
		}
	}
	if _, _, err := Limits(0x1304); !errors.Is(err, ErrUnknownSuite) {
		t.Errorf("TLS_AES_128_CCM_SHA256: err %v, want ErrUnknownSuite", err)
	}
}

// TestConfidentialityLimitEnforced lowers a key's limit and checks that
// Seal stops at it.
func TestConfidentialityLimitEnforced(t *testing.T) {
	keys, err := New(tls.TLS_AES_128_GCM_SHA256, testSecret(t, tls.TLS_AES_128_GCM_SHA256, 2), Version1)
	if err != nil {
		t.Fatal(err)
	}
	pk := keys.Packet()
	if pk.ConfidentialityLimit() != AESGCMConfidentialityLimit {
		t.Fatalf("limit %d, want %d", pk.ConfidentialityLimit(), AESGCMConfidentialityLimit)
	}
	pk.limit = 3
	for i := range 3 {
		if _, err := pk.Seal(make([]byte, 30), 5, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if pk.Sealed() != 3 {
		t.Errorf("Sealed() = %d, want 3", pk.Sealed())
	}
	if _, err := pk.Seal(make([]byte, 30), 5, 3); !errors.Is(err, ErrKeyExhausted) {
		t.Errorf("fourth packet: err %v, want ErrKeyExhausted", err)
	}
}

// TestNoAllocations checks that the per-packet operations do not allocate
// when the buffer has room for the tag.
func TestNoAllocations(t *testing.T) {
	for _, suiteID := range allSuites {
		keys, err := New(suiteID, testSecret(t, suiteID, 9), Version1)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(9, 9))
		pkt, pnOffset := testPacket(r, false, 2, 5, 1200)
		plain := bytes.Clone(pkt)
		buf := make([]byte, len(pkt), len(pkt)+TagLen)
		var sealed []byte
		allocs := testing.AllocsPerRun(50, func() {
			copy(buf, plain)
			out, err := keys.Protect(buf[:len(plain)], pnOffset, 5)
			if err != nil {
				panic(err)
			}
			sealed = out
		})
		if allocs != 0 {
			t.Errorf("%s: Protect allocates %.1f times per packet", tls.CipherSuiteName(suiteID), allocs)
		}
		protected := bytes.Clone(sealed)
		allocs = testing.AllocsPerRun(50, func() {
			copy(buf[:len(protected)], protected)
			if _, err := unprotect(keys, buf[:len(protected)], pnOffset, 5); err != nil {
				panic(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: unprotect allocates %.1f times per packet", tls.CipherSuiteName(suiteID), allocs)
		}
	}
}
