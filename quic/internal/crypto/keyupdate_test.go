package crypto

import (
	"bytes"
	"crypto/tls"
	"errors"
	"math/rand/v2"
	"testing"
)

// appPair returns a sender's and a receiver's view of one direction's
// 1-RTT keys, each made as the core makes it.
func appPair(t *testing.T, suiteID uint16, v Version) (tx, rx *AppKeys) {
	t.Helper()
	secret := testSecret(t, suiteID, 42)
	tx, err := NewSendAppKeys(suiteID, secret, v)
	if err != nil {
		t.Fatal(err)
	}
	rx, err = NewAppKeys(suiteID, secret, v)
	if err != nil {
		t.Fatal(err)
	}
	return tx, rx
}

// send protects a short-header packet with the sender's current keys.
func send(t *testing.T, tx *AppKeys, r *rand.Rand, pn uint64) ([]byte, int) {
	t.Helper()
	pkt, pnOffset := testPacket(r, false, 4, pn, 30)
	out, err := tx.Protect(pkt, pnOffset, pn)
	if err != nil {
		t.Fatal(err)
	}
	return out, pnOffset
}

// receive runs the receive path of RFC 9001 section 6: header protection,
// key selection by key phase and packet number, open, record.
func receive(rx *AppKeys, pkt []byte, pnOffset int) (KeyGen, bool, error) {
	pnLen, truncated, err := rx.Header().Remove(pkt, pnOffset)
	if err != nil {
		return 0, false, err
	}
	pn := truncated // 4-byte encodings of small packet numbers in these tests
	g, k := rx.Select(KeyPhase(pkt[0]), pn)
	if _, err := k.Open(pkt, pnOffset+pnLen, pn); err != nil {
		return g, false, err
	}
	updated, err := rx.Opened(g, pn)
	return g, updated, err
}

// TestKeyUpdateSecrets checks that each generation's secret is
// HKDF-Expand-Label(previous, "quic ku" or "quicv2 ku", "", Hash.length) and
// that the header key never changes.
func TestKeyUpdateSecrets(t *testing.T) {
	forEachSuiteVersion(t, func(t *testing.T, suiteID uint16, v Version) {
		s, _ := lookupSuite(suiteID)
		p, _ := v.params()
		secret := testSecret(t, suiteID, 1)
		a, err := NewAppKeys(suiteID, secret, v)
		if err != nil {
			t.Fatal(err)
		}
		hk := a.Header()
		want := secret
		for gen := range uint64(4) {
			if !bytes.Equal(a.cur.secret, want) {
				t.Fatalf("generation %d: wrong current secret", gen)
			}
			if a.Generation() != gen || a.KeyPhase() != uint8(gen&1) {
				t.Fatalf("generation %d: Generation()=%d KeyPhase()=%d", gen, a.Generation(), a.KeyPhase())
			}
			iv, err := expandLabel(s.hash, want, p.ivLabel, ivLen)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Current().iv[:], iv) {
				t.Fatalf("generation %d: IV not derived from the generation's secret", gen)
			}
			if want, err = expandLabel(s.hash, want, p.kuLabel, len(want)); err != nil {
				t.Fatal(err)
			}
			if err := a.Update(); err != nil {
				t.Fatal(err)
			}
			if a.Header() != hk {
				t.Fatal("key update replaced the header protection key")
			}
		}
	})
}

// TestKeyUpdateFlow plays a peer-initiated key update on the receive side:
// the changed key phase selects the next keys, opening with them promotes
// them, delayed packets still open with the previous keys until those are
// discarded.
func TestKeyUpdateFlow(t *testing.T) {
	forEachSuiteVersion(t, func(t *testing.T, suiteID uint16, v Version) {
		r := rand.New(rand.NewPCG(uint64(suiteID), 99))
		tx, rx := appPair(t, suiteID, v)

		for pn := uint64(0); pn < 3; pn++ {
			pkt, off := send(t, tx, r, pn)
			if g, up, err := receive(rx, pkt, off); err != nil || g != GenCurrent || up {
				t.Fatalf("pn %d before update: gen %v updated %v err %v", pn, g, up, err)
			}
		}
		delayed, delayedOff := send(t, tx, r, 3) // phase 0, arrives late

		if err := tx.Update(); err != nil {
			t.Fatal(err)
		}
		pkt, off := send(t, tx, r, 4)
		g, up, err := receive(rx, pkt, off)
		if err != nil || g != GenNext || !up {
			t.Fatalf("first packet of phase 1: gen %v updated %v err %v", g, up, err)
		}
		if rx.KeyPhase() != 1 || rx.Generation() != 1 || rx.Previous() == nil {
			t.Fatalf("after update: phase %d generation %d previous %v", rx.KeyPhase(), rx.Generation(), rx.Previous())
		}

		g, up, err = receive(rx, delayed, delayedOff)
		if err != nil || g != GenPrevious || up {
			t.Fatalf("delayed phase-0 packet: gen %v updated %v err %v", g, up, err)
		}

		pkt, off = send(t, tx, r, 5)
		if g, _, err := receive(rx, pkt, off); err != nil || g != GenCurrent {
			t.Fatalf("second packet of phase 1: gen %v err %v", g, err)
		}

		// After the previous keys are gone, the old phase means the next
		// keys: a stale packet no longer opens.
		rx.DiscardPrevious()
		if rx.Previous() != nil {
			t.Fatal("previous keys kept after DiscardPrevious")
		}
		stale, staleOff := sendWithKeys(t, r, tx.prev.key, tx.Header(), 2)
		if g, _, err := receive(rx, stale, staleOff); g != GenNext || !errors.Is(err, ErrAuthentication) {
			t.Fatalf("stale packet after discard: gen %v err %v, want next keys and ErrAuthentication", g, err)
		}

		// A second update, this time both sides in step.
		if err := tx.Update(); err != nil {
			t.Fatal(err)
		}
		pkt, off = send(t, tx, r, 6)
		if g, up, err := receive(rx, pkt, off); err != nil || g != GenNext || !up || rx.KeyPhase() != 0 {
			t.Fatalf("second update: gen %v updated %v err %v phase %d", g, up, err, rx.KeyPhase())
		}
	})
}

// sendWithKeys protects a phase-0 short-header packet with given keys.
func sendWithKeys(t *testing.T, r *rand.Rand, pk *PacketKey, hk *HeaderKey, pn uint64) ([]byte, int) {
	t.Helper()
	pkt, off := testPacket(r, false, 4, pn, 30)
	out, err := protect(pk, hk, pkt, off, pn)
	if err != nil {
		t.Fatal(err)
	}
	return out, off
}

// TestLocalKeyUpdate: the endpoint that initiates an update also moves its
// receive keys; the peer's packets of the old phase select the previous
// keys until the peer follows.
func TestLocalKeyUpdate(t *testing.T) {
	a, err := NewAppKeys(tls.TLS_AES_128_GCM_SHA256, testSecret(t, tls.TLS_AES_128_GCM_SHA256, 3), Version1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Opened(GenCurrent, 10); err != nil {
		t.Fatal(err)
	}
	old := a.Current()
	if err := a.Update(); err != nil {
		t.Fatal(err)
	}
	if g, k := a.Select(0, 11); g != GenPrevious || k != old {
		t.Errorf("old-phase packet after a local update: %v keys", g)
	}
	if g, _ := a.Select(1, 12); g != GenCurrent {
		t.Errorf("new-phase packet after a local update: %v keys", g)
	}
}

// TestKeyUpdateErrors checks the ordering rule of RFC 9001 section 6.4.
func TestKeyUpdateErrors(t *testing.T) {
	newKeys := func() *AppKeys {
		a, err := NewAppKeys(tls.TLS_CHACHA20_POLY1305_SHA256, testSecret(t, tls.TLS_CHACHA20_POLY1305_SHA256, 4), Version2)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	// Next keys on a packet number below one seen with the current keys.
	a := newKeys()
	if _, err := a.Opened(GenCurrent, 20); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Opened(GenNext, 15); !errors.Is(err, ErrKeyUpdate) {
		t.Errorf("newer keys on a lower packet number: err %v, want ErrKeyUpdate", err)
	}
	if a.Generation() != 0 {
		t.Error("a rejected update still moved the keys")
	}

	// Previous keys on a packet number above one seen with the current keys.
	a = newKeys()
	if _, err := a.Opened(GenNext, 5); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Opened(GenPrevious, 9); !errors.Is(err, ErrKeyUpdate) {
		t.Errorf("older keys on a higher packet number: err %v, want ErrKeyUpdate", err)
	}

	// Current keys below a packet opened with the previous keys.
	a = newKeys()
	if err := a.Update(); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Opened(GenPrevious, 30); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Opened(GenCurrent, 25); !errors.Is(err, ErrKeyUpdate) {
		t.Errorf("current keys below a previous-phase packet: err %v, want ErrKeyUpdate", err)
	}

	// No previous keys at all.
	a = newKeys()
	if _, err := a.Opened(GenPrevious, 1); !errors.Is(err, ErrNoKeys) {
		t.Errorf("previous generation before any update: err %v, want ErrNoKeys", err)
	}
	if _, err := a.Opened(KeyGen(9), 1); err == nil {
		t.Error("unknown generation accepted")
	}
}

func TestAppKeysProtectNeedsShortHeader(t *testing.T) {
	a, err := NewAppKeys(tls.TLS_AES_256_GCM_SHA384, testSecret(t, tls.TLS_AES_256_GCM_SHA384, 6), Version1)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(6, 6))
	pkt, off := testPacket(r, true, 2, 1, 30)
	if _, err := a.Protect(pkt, off, 1); !errors.Is(err, ErrHeaderForm) {
		t.Errorf("long header: err %v, want ErrHeaderForm", err)
	}
	if _, err := a.Protect(nil, 1, 1); !errors.Is(err, ErrHeaderForm) {
		t.Errorf("empty packet: err %v, want ErrHeaderForm", err)
	}
}

func TestKeyPhaseBit(t *testing.T) {
	for _, first := range []byte{0x40, 0x44, 0x5f, 0x7b} {
		for _, phase := range []uint8{0, 1} {
			b := WithKeyPhase(first, phase)
			if KeyPhase(b) != phase || b&^KeyPhaseBit != first&^KeyPhaseBit {
				t.Errorf("WithKeyPhase(%08b, %d) = %08b", first, phase, b)
			}
		}
	}
	for g, name := range map[KeyGen]string{GenCurrent: "current", GenPrevious: "previous", GenNext: "next", 7: "KeyGen(7)"} {
		if g.String() != name {
			t.Errorf("KeyGen(%d).String() = %q, want %q", g, g.String(), name)
		}
	}
}

// TestSendAppKeysDeriveNextLate: sending keys hold no next packet key
// until an update uses it, and then seal exactly as keys that derived it
// in advance.
func TestSendAppKeysDeriveNextLate(t *testing.T) {
	forEachSuiteVersion(t, func(t *testing.T, suiteID uint16, v Version) {
		secret := testSecret(t, suiteID, 7)
		lazy, err := NewSendAppKeys(suiteID, secret, v)
		if err != nil {
			t.Fatal(err)
		}
		eager, err := NewAppKeys(suiteID, secret, v)
		if err != nil {
			t.Fatal(err)
		}
		if lazy.next.key != nil || eager.next.key == nil {
			t.Fatalf("next packet keys: sending %v, receiving %v", lazy.next.key != nil, eager.next.key != nil)
		}
		for range 2 {
			if err := lazy.Update(); err != nil {
				t.Fatal(err)
			}
			if err := eager.Update(); err != nil {
				t.Fatal(err)
			}
			if lazy.next.key != nil {
				t.Error("the generation after an update has a packet key already")
			}
			r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
			a, _ := send(t, lazy, r1, 9)
			b, _ := send(t, eager, r2, 9)
			if !bytes.Equal(a, b) {
				t.Fatalf("generation %d seals differently", lazy.Generation())
			}
		}
		if lazy.Next() == nil || lazy.next.key == nil {
			t.Error("Next did not derive the key")
		}
	})
}
