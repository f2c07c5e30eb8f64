package crypto

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"testing"
)

// TestResetTokenKnownAnswer uses RFC 4231 test case 1 (HMAC-SHA-256, key
// 20 bytes of 0x0b, data "Hi There"): the token is the MAC's first 16 bytes.
func TestResetTokenKnownAnswer(t *testing.T) {
	rk, err := NewResetKey(bytes.Repeat([]byte{0x0b}, 20))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := rk.Token([]byte("Hi There"))
	if err != nil {
		t.Fatal(err)
	}
	expectHex(t, "token", tok[:], "b0344c61d8db38535ca8afceaf0bf12b")
}

// TestResetTokenMatchesHMAC holds the prepared pads to crypto/hmac for
// keys shorter than, as long as and longer than SHA-256's block, which RFC
// 2104 section 2 hashes first, and connection IDs of every length.
func TestResetTokenMatchesHMAC(t *testing.T) {
	for _, keyLen := range []int{MinResetKeyLen, 32, 64, 65, 200} {
		key := bytes.Repeat([]byte{byte(keyLen)}, keyLen)
		rk, err := NewResetKey(key)
		if err != nil {
			t.Fatal(err)
		}
		for idLen := 1; idLen <= MaxConnIDLen; idLen++ {
			id := bytes.Repeat([]byte{byte(idLen)}, idLen)
			tok, err := rk.Token(id)
			if err != nil {
				t.Fatal(err)
			}
			mac := hmac.New(sha256.New, key)
			mac.Write(id)
			if want := mac.Sum(nil)[:ResetTokenLen]; !bytes.Equal(tok[:], want) {
				t.Fatalf("key of %d bytes, connection ID of %d: token %x, want %x", keyLen, idLen, tok, want)
			}
		}
	}
}

func TestResetTokenDependsOnKeyAndConnID(t *testing.T) {
	k1, err := NewResetKey(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	k2, err := NewResetKey(bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	cid := []byte{9, 8, 7, 6, 5, 4, 3, 2}
	a, _ := k1.Token(cid)
	again, _ := k1.Token(cid)
	other, _ := k1.Token(append(bytes.Clone(cid), 1))
	b, _ := k2.Token(cid)
	if a != again {
		t.Error("token not stable for one key and connection ID")
	}
	if a == other || a == b {
		t.Error("token does not depend on both key and connection ID")
	}
}

func TestResetTokenBadInput(t *testing.T) {
	if _, err := NewResetKey(make([]byte, MinResetKeyLen-1)); err == nil {
		t.Error("15-byte reset key accepted")
	}
	rk, err := NewResetKey(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rk.Token(nil); !errors.Is(err, ErrConnIDLen) {
		t.Errorf("empty connection ID: err %v, want ErrConnIDLen", err)
	}
	if _, err := rk.Token(make([]byte, MaxConnIDLen+1)); !errors.Is(err, ErrConnIDLen) {
		t.Errorf("21-byte connection ID: err %v, want ErrConnIDLen", err)
	}
}

func TestMatchesResetToken(t *testing.T) {
	rk, err := NewResetKey(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := rk.Token([]byte{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	dgram := append([]byte{0x41, 0xaa, 0xbb, 0xcc, 0xdd}, tok[:]...)
	if !MatchesResetToken(dgram, tok) {
		t.Error("21-byte Stateless Reset not recognised")
	}
	if MatchesResetToken(dgram[1:], tok) {
		t.Error("20-byte datagram recognised as a Stateless Reset")
	}
	dgram[len(dgram)-1] ^= 1
	if MatchesResetToken(dgram, tok) {
		t.Error("datagram with another token recognised")
	}
}
