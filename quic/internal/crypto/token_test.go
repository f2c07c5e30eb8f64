package crypto

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

var testTokenConfig = TokenConfig{RetryLifetime: 10 * time.Second, NewTokenLifetime: 24 * time.Hour}

// seededReader is a replayable nonce source for tests.
type seededReader struct{ r *rand.Rand }

func (s seededReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(s.r.Uint32())
	}
	return len(p), nil
}

func newSeededReader(seed uint64) seededReader {
	return seededReader{rand.New(rand.NewPCG(seed, 0x70c))}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func newTestTokenProtector(t testing.TB, keyByte byte) *TokenProtector {
	t.Helper()
	p, err := NewTokenProtector(bytes.Repeat([]byte{keyByte}, TokenKeyLen), testTokenConfig)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	issued     = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clientAddr = netip.MustParseAddrPort("192.0.2.7:51000")
)

func retryToken() Token {
	return Token{
		Kind: TokenRetry, Version: Version1, Addr: clientAddr, IssuedAt: issued,
		OriginalDCID: []byte{0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08},
	}
}

func newToken() Token {
	return Token{Kind: TokenNewToken, Version: Version2, Addr: clientAddr, IssuedAt: issued}
}

func TestTokenRoundTrip(t *testing.T) {
	p := newTestTokenProtector(t, 1)
	rnd := newSeededReader(1)
	for _, tok := range []Token{retryToken(), newToken()} {
		sealed, err := p.Seal([]byte("prefix"), tok, rnd)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(sealed, []byte("prefix")) {
			t.Fatal("Seal did not append to dst")
		}
		sealed = sealed[len("prefix"):]
		got, err := p.Open(sealed, clientAddr, tok.Version, issued.Add(time.Second))
		if err != nil {
			t.Fatalf("kind %d: %v", tok.Kind, err)
		}
		if !got.IssuedAt.Equal(tok.IssuedAt) {
			t.Errorf("issue time %v, want %v", got.IssuedAt, tok.IssuedAt)
		}
		got.IssuedAt = tok.IssuedAt
		if !reflect.DeepEqual(got, tok) {
			t.Errorf("opened %+v, want %+v", got, tok)
		}
	}
}

func TestTokenChecks(t *testing.T) {
	p := newTestTokenProtector(t, 2)
	rnd := newSeededReader(2)
	seal := func(tok Token) []byte {
		b, err := p.Seal(nil, tok, rnd)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	retry, fresh := seal(retryToken()), seal(newToken())
	otherPort := netip.AddrPortFrom(clientAddr.Addr(), 40000)
	mapped := netip.AddrPortFrom(netip.AddrFrom16(clientAddr.Addr().As16()), clientAddr.Port())
	cases := []struct {
		name  string
		token []byte
		addr  netip.AddrPort
		v     Version
		now   time.Time
		want  error
	}{
		{"retry within lifetime", retry, clientAddr, Version1, issued.Add(10 * time.Second), nil},
		{"retry expired", retry, clientAddr, Version1, issued.Add(10*time.Second + time.Millisecond), ErrTokenExpired},
		{"retry from the future", retry, clientAddr, Version1, issued.Add(-time.Millisecond), ErrTokenExpired},
		{"retry, other port", retry, otherPort, Version1, issued, ErrTokenAddress},
		{"retry, other address", retry, netip.MustParseAddrPort("192.0.2.8:51000"), Version1, issued, ErrTokenAddress},
		{"retry, IPv4-mapped address", retry, mapped, Version1, issued, nil},
		{"retry, other version", retry, clientAddr, Version2, issued, ErrTokenVersion},
		{"new token, other port", fresh, otherPort, Version2, issued.Add(time.Hour), nil},
		{"new token, other address", fresh, netip.MustParseAddrPort("[2001:db8::1]:51000"), Version2, issued, ErrTokenAddress},
		{"new token expired", fresh, clientAddr, Version2, issued.Add(25 * time.Hour), ErrTokenExpired},
		{"new token, other version", fresh, clientAddr, Version1, issued, ErrTokenVersion},
	}
	for _, c := range cases {
		_, err := p.Open(c.token, c.addr, c.v, c.now)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
}

// TestTokenTampered changes every byte of a sealed token, truncates it at
// every length, and opens it under another key: all are invalid.
func TestTokenTampered(t *testing.T) {
	p := newTestTokenProtector(t, 3)
	sealed, err := p.Seal(nil, retryToken(), newSeededReader(3))
	if err != nil {
		t.Fatal(err)
	}
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		if _, err := p.Open(bad, clientAddr, Version1, issued); !errors.Is(err, ErrTokenInvalid) {
			t.Fatalf("byte %d changed: err %v, want ErrTokenInvalid", i, err)
		}
	}
	for n := range len(sealed) {
		if _, err := p.Open(sealed[:n], clientAddr, Version1, issued); !errors.Is(err, ErrTokenInvalid) {
			t.Fatalf("%d-byte prefix: err %v, want ErrTokenInvalid", n, err)
		}
	}
	if _, err := p.Open(append(bytes.Clone(sealed), 0), clientAddr, Version1, issued); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("extra byte: err %v, want ErrTokenInvalid", err)
	}
	other := newTestTokenProtector(t, 4)
	if _, err := other.Open(sealed, clientAddr, Version1, issued); !errors.Is(err, ErrTokenInvalid) {
		t.Errorf("other key: err %v, want ErrTokenInvalid", err)
	}
}

func TestTokenSealErrors(t *testing.T) {
	p := newTestTokenProtector(t, 5)
	rnd := newSeededReader(5)
	bad := []struct {
		name string
		edit func(*Token)
		want error
	}{
		{"unknown kind", func(tk *Token) { tk.Kind = 3 }, ErrTokenInvalid},
		{"NEW_TOKEN with ODCID", func(tk *Token) { tk.Kind = TokenNewToken }, ErrTokenInvalid},
		{"no address", func(tk *Token) { tk.Addr = netip.AddrPort{} }, ErrTokenInvalid},
		{"long ODCID", func(tk *Token) { tk.OriginalDCID = make([]byte, 21) }, ErrConnIDLen},
		{"unknown version", func(tk *Token) { tk.Version = 0xff00001d }, ErrUnknownVersion},
	}
	for _, c := range bad {
		tok := retryToken()
		c.edit(&tok)
		if _, err := p.Seal(nil, tok, rnd); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := p.Seal(nil, retryToken(), failingReader{}); err == nil {
		t.Error("Seal succeeded without a nonce")
	}
	if _, err := NewTokenProtector(make([]byte, 16), testTokenConfig); err == nil {
		t.Error("16-byte token key accepted")
	}
	if _, err := NewTokenProtector(make([]byte, TokenKeyLen), TokenConfig{RetryLifetime: time.Second}); err == nil {
		t.Error("zero NEW_TOKEN lifetime accepted")
	}
}

// FuzzToken seals arbitrary token contents and opens them again, and opens
// arbitrary bytes as a token: no panic, and only sealed tokens open.
func FuzzToken(f *testing.F) {
	f.Add(uint8(1), []byte{192, 0, 2, 1}, uint16(443), []byte{1, 2, 3}, int64(1700000000000), []byte("garbage"))
	f.Add(uint8(2), make([]byte, 16), uint16(0), []byte{}, int64(0), []byte{tokenFormat})
	p := newTestTokenProtector(f, 6)
	f.Fuzz(func(t *testing.T, kind uint8, ip []byte, port uint16, odcid []byte, ms int64, junk []byte) {
		if _, err := p.Open(junk, clientAddr, Version1, issued); err == nil {
			t.Fatalf("random bytes %x opened as a token", junk)
		}
		addr, ok := netip.AddrFromSlice(ip)
		if !ok {
			return
		}
		tok := Token{
			Kind: TokenKind(kind), Version: Version1, Addr: netip.AddrPortFrom(addr, port),
			IssuedAt: time.UnixMilli(ms), OriginalDCID: odcid,
		}
		sealed, err := p.Seal(nil, tok, newSeededReader(uint64(ms)))
		if err != nil {
			return // invalid contents are refused; the unit tests check which
		}
		got, err := p.Open(sealed, tok.Addr, Version1, tok.IssuedAt)
		if err != nil {
			t.Fatalf("sealed token %+v does not open: %v", tok, err)
		}
		if got.Kind != tok.Kind || got.Addr.Addr() != addr.Unmap() || got.Addr.Port() != port ||
			!bytes.Equal(got.OriginalDCID, odcid) || got.IssuedAt.UnixMilli() != ms {
			t.Fatalf("opened %+v, sealed %+v", got, tok)
		}
	})
}
