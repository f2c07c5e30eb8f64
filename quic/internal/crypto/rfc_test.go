package crypto

import (
	"bytes"
	"crypto/hkdf"
	"crypto/tls"
	"encoding/hex"
	"testing"
)

func expectHex(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	w := unhex(t, want)
	if !bytes.Equal(got, w) {
		t.Errorf("%s:\n got %x\nwant %x", what, got, w)
	}
}

// expectPacket compares whole packets and names the first differing byte.
func expectPacket(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
}

// TestHKDFLabels checks the HkdfLabel encodings listed in appendix A.1 of
// both RFCs.
func TestHKDFLabels(t *testing.T) {
	cases := []struct {
		label  string
		length int
		want   string
	}{
		{"client in", 32, "00200f746c73313320636c69656e7420696e00"},
		{"server in", 32, "00200f746c7331332073657276657220696e00"},
		{"quic key", 16, "00100e746c7331332071756963206b657900"},
		{"quic iv", 12, "000c0d746c733133207175696320697600"},
		{"quic hp", 16, "00100d746c733133207175696320687000"},
		{"quicv2 key", 16, "001010746c73313320717569637632206b657900"},
		{"quicv2 iv", 12, "000c0f746c7331332071756963763220697600"},
		{"quicv2 hp", 16, "00100f746c7331332071756963763220687000"},
	}
	for _, c := range cases {
		got, err := hkdfLabel(c.label, c.length)
		if err != nil {
			t.Fatal(err)
		}
		expectHex(t, c.label, got, c.want)
	}
	if _, err := hkdfLabel(string(make([]byte, 250)), 16); err == nil {
		t.Error("label longer than 255 bytes with its prefix encoded without error")
	}
	if _, err := hkdfLabel("quic key", 0); err == nil {
		t.Error("zero-length output accepted")
	}
}

// TestInitialKeys checks appendix A.1: initial secret, client and server
// secrets, and their key, IV and header protection key.
func TestInitialKeys(t *testing.T) {
	for _, vec := range allVectors {
		t.Run(vec.version.String(), func(t *testing.T) {
			dcid := unhex(t, vecDCID)
			p, err := vec.version.params()
			if err != nil {
				t.Fatal(err)
			}
			initial, err := hkdf.Extract(newSHA256, dcid, p.initialSalt)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "initial_secret", initial, vec.initialSecret)

			cs, ss, err := InitialSecrets(dcid, vec.version)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "client_initial_secret", cs, vec.clientSecret)
			expectHex(t, "server_initial_secret", ss, vec.serverSecret)

			client, server, err := NewInitial(dcid, vec.version)
			if err != nil {
				t.Fatal(err)
			}
			checkDerived(t, "client", p, cs, client, vec.clientKey, vec.clientIV)
			checkDerived(t, "server", p, ss, server, vec.serverKey, vec.serverIV)
			checkMask(t, "client hp", client.Header(), vec.clientSample, vec.clientMask)
			checkMask(t, "server hp", server.Header(), vec.serverSample, vec.serverMask)
			hp, err := expandLabel(newSHA256, cs, p.hpLabel, 16)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "client hp", hp, vec.clientHP)
			hp, err = expandLabel(newSHA256, ss, p.hpLabel, 16)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "server hp", hp, vec.serverHP)
		})
	}
}

// checkDerived compares the AEAD key derived from secret, and the IV held by
// keys, with the RFC's values.
func checkDerived(t *testing.T, who string, p *versionParams, secret []byte, keys *Keys, key, iv string) {
	t.Helper()
	k, err := expandLabel(newSHA256, secret, p.keyLabel, 16)
	if err != nil {
		t.Fatal(err)
	}
	expectHex(t, who+" key", k, key)
	expectHex(t, who+" iv", keys.Packet().iv[:], iv)
}

// checkMask computes the header protection mask of sample.
func checkMask(t *testing.T, what string, h *HeaderKey, sample, mask string) {
	t.Helper()
	if err := h.computeMask(unhex(t, sample)); err != nil {
		t.Fatal(err)
	}
	expectHex(t, what+" mask", h.mask[:5], mask)
}

// initialCase is one Initial packet of appendix A.2 or A.3.
type initialCase struct {
	name                    string
	header, protectedHeader string
	payload                 []byte
	pn                      uint64
	pnLen                   int
	packet                  string
	sender                  func(client, server *Keys) *Keys
}

func initialCases(t *testing.T, vec *vectorSet) []initialCase {
	crypto := unhex(t, vecClientCrypto)
	clientPayload := make([]byte, vecClientPayloadLen)
	copy(clientPayload, crypto) // the rest is PADDING (0x00)
	return []initialCase{
		{
			name: "client", header: vec.clientHeader, protectedHeader: vec.clientProtectedHeader,
			payload: clientPayload, pn: 2, pnLen: 4, packet: vec.clientPacket,
			sender: func(c, _ *Keys) *Keys { return c },
		},
		{
			name: "server", header: vec.serverHeader, protectedHeader: vec.serverProtectedHeader,
			payload: unhex(t, vecServerPayload), pn: 1, pnLen: 2, packet: vec.serverPacket,
			sender: func(_, s *Keys) *Keys { return s },
		},
	}
}

// TestInitialPackets protects the client and server Initial packets of
// appendices A.2 and A.3 byte for byte, then removes the protection again.
func TestInitialPackets(t *testing.T) {
	for _, vec := range allVectors {
		for _, c := range initialCases(t, vec) {
			t.Run(vec.version.String()+"/"+c.name, func(t *testing.T) {
				client, server, err := NewInitial(unhex(t, vecDCID), vec.version)
				if err != nil {
					t.Fatal(err)
				}
				keys := c.sender(client, server)
				hdr := unhex(t, c.header)
				pnOffset := len(hdr) - c.pnLen
				pkt := append(append(make([]byte, 0, len(hdr)+len(c.payload)+TagLen), hdr...), c.payload...)

				out, err := keys.Protect(pkt, pnOffset, c.pn)
				if err != nil {
					t.Fatal(err)
				}
				want := unhex(t, c.packet)
				expectPacket(t, "protected packet", out, want)
				expectHex(t, "protected header", out[:len(hdr)], c.protectedHeader)

				// The peer's view: remove header protection, open.
				rx := bytes.Clone(want)
				pnLen, truncated, err := keys.Header().Remove(rx, pnOffset)
				if err != nil {
					t.Fatal(err)
				}
				if pnLen != c.pnLen || truncated != c.pn {
					t.Fatalf("Remove: pn length %d, pn %d; want %d, %d", pnLen, truncated, c.pnLen, c.pn)
				}
				expectHex(t, "unprotected header", rx[:len(hdr)], c.header)
				payload, err := keys.Packet().Open(rx, pnOffset+pnLen, truncated)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(payload, c.payload) {
					t.Errorf("opened payload differs from the RFC's")
				}
			})
		}
	}
}

// TestRetryVectors checks appendix A.4 and the Retry key and nonce
// derivation of RFC 9001 section 5.8 and RFC 9369 section 3.3.3.
func TestRetryVectors(t *testing.T) {
	secrets := map[Version]string{
		Version1: "d9c9943e6101fd200021506bcc02814c73030f25c79d71ce876eca876e6fca8e",
		Version2: "c4dd2484d681aefa4ff4d69c2c20299984a765a5d3c31982f38fc74162155e9f",
	}
	for _, vec := range allVectors {
		t.Run(vec.version.String(), func(t *testing.T) {
			p, _ := vec.version.params()
			secret := unhex(t, secrets[vec.version])
			key, err := expandLabel(newSHA256, secret, p.keyLabel, 16)
			if err != nil {
				t.Fatal(err)
			}
			nonce, err := expandLabel(newSHA256, secret, p.ivLabel, 12)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "retry key", key, hex.EncodeToString(p.retryKey))
			expectHex(t, "retry nonce", nonce, hex.EncodeToString(p.retryNonce))

			dcid := unhex(t, vecDCID)
			pkt := unhex(t, vec.retryPacket)
			if err := VerifyRetry(pkt, dcid, vec.version); err != nil {
				t.Fatalf("VerifyRetry: %v", err)
			}
			body := bytes.Clone(pkt[:len(pkt)-TagLen])
			got, err := AppendRetryTag(body, dcid, vec.version)
			if err != nil {
				t.Fatal(err)
			}
			expectPacket(t, "Retry packet", got, pkt)
		})
	}
}

// TestChaCha20ShortHeader checks appendix A.5: 1-RTT keys for
// TLS_CHACHA20_POLY1305_SHA256, the next key update secret, and a minimal
// short header packet.
func TestChaCha20ShortHeader(t *testing.T) {
	for _, vec := range allVectors {
		t.Run(vec.version.String(), func(t *testing.T) {
			secret := unhex(t, vecChachaSecret)
			a, err := NewAppKeys(tls.TLS_CHACHA20_POLY1305_SHA256, secret, vec.version)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := vec.version.params()
			key, err := expandLabel(newSHA256, secret, p.keyLabel, 32)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "key", key, vec.chachaKey)
			expectHex(t, "iv", a.Current().iv[:], vec.chachaIV)
			expectHex(t, "hp", a.Header().chacha[:], vec.chachaHP)
			expectHex(t, "ku", a.next.secret, vec.chachaKU)
			expectHex(t, "nonce", a.Current().nonceFor(vecChachaPN), vec.chachaNonce)
			checkMask(t, "hp", a.Header(), vec.chachaSample, vec.chachaMask)

			hdr := unhex(t, vecChachaHeader)
			pkt := append(hdr, unhex(t, vecChachaPlain)...)
			out, err := a.Protect(pkt, 1, vecChachaPN)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "packet", out, vec.chachaPacket)
			expectHex(t, "ciphertext", out[len(hdr):], vec.chachaCiphertext)
			expectHex(t, "protected header", out[:len(hdr)], vec.chachaProtectedHeader)

			rx := unhex(t, vec.chachaPacket)
			pnLen, truncated, err := a.Header().Remove(rx, 1)
			if err != nil {
				t.Fatal(err)
			}
			// 654360564 encoded on 3 bytes is 49140 (0x00bff4).
			if pnLen != 3 || truncated != 49140 {
				t.Fatalf("Remove: pn length %d, pn %d; want 3, 49140", pnLen, truncated)
			}
			g, k := a.Select(KeyPhase(rx[0]), vecChachaPN)
			if g != GenCurrent {
				t.Fatalf("Select chose %v keys for the first key phase", g)
			}
			payload, err := k.Open(rx, 1+pnLen, vecChachaPN)
			if err != nil {
				t.Fatal(err)
			}
			expectHex(t, "payload", payload, vecChachaPlain)
		})
	}
}
