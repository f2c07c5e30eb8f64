package capture

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"encoding/hex"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInitialSecrets checks the Initial key schedule against RFC 9001
// appendix A.1.
func TestInitialSecrets(t *testing.T) {
	dcid := unhex(t, "8394c8f03e515708")
	client, server, err := initialSecrets(Version1, dcid)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name           string
		secret         []byte
		want           string
		key, iv, hpKey string
	}{
		{"client", client, "c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea",
			"1f369613dd76d5467730efcbe3b1a22d", "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2"},
		{"server", server, "3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b",
			"cf3a5331653c364c88f0f379b6067e37", "0ac1493ca1905853b0bba03e", "c206b8d9b9f0f37644430b490eeaa314"},
	} {
		if got := hex.EncodeToString(c.secret); got != c.want {
			t.Errorf("%s Initial secret %s, want %s", c.name, got, c.want)
		}
		for _, k := range []struct {
			label, want string
			n           int
		}{{"quic key", c.key, 16}, {"quic iv", c.iv, 12}, {"quic hp", c.hpKey, 16}} {
			if got := hex.EncodeToString(expandLabel(crypto.SHA256, c.secret, k.label, k.n)); got != k.want {
				t.Errorf("%s %q: %s, want %s", c.name, k.label, got, k.want)
			}
		}
	}
}

// TestChaCha20ShortHeader opens the ChaCha20-Poly1305 short header packet
// of RFC 9001 appendix A.5 and checks its key update secret.
func TestChaCha20ShortHeader(t *testing.T) {
	secret := unhex(t, "9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b")
	s, err := suiteByID(tls.TLS_CHACHA20_POLY1305_SHA256)
	if err != nil {
		t.Fatal(err)
	}
	prot, err := newProtection(s, Version1, secret)
	if err != nil {
		t.Fatal(err)
	}
	packet := unhex(t, "4cfe4189655e5cd55c41f69080575d7999c25a5bfb")
	const pn = 654360564
	o, err := open(packet, 1, pn-1, prot.hp, func(int) []*protection { return []*protection{prot} })
	if err != nil {
		t.Fatal(err)
	}
	if o.pn != pn || !bytes.Equal(o.payload, []byte{0x01}) || o.keyPhase != 0 {
		t.Fatalf("packet number %d, payload %x, key phase %d; want %d, 01, 0", o.pn, o.payload, o.keyPhase, pn)
	}
	want := "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9"
	if got := hex.EncodeToString(nextSecret(s, Version1, secret)); got != want {
		t.Errorf("key update secret %s, want %s", got, want)
	}
}

// TestDecodePacketNumber follows RFC 9000 appendix A.3's example.
func TestDecodePacketNumber(t *testing.T) {
	if got := decodePacketNumber(0xa82f30ea, 0x9b32, 2); got != 0xa82f9b32 {
		t.Fatalf("decoded %#x, want 0xa82f9b32", got)
	}
	if got := decodePacketNumber(-1, 0, 1); got != 0 {
		t.Fatalf("first packet decoded as %d", got)
	}
}
