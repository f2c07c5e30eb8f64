package crypto

import (
	"bytes"
	"crypto/tls"
	"testing"
)

// FuzzUnprotect feeds arbitrary datagrams and packet number offsets to the
// receive path of every suite (no panic, no success on garbage), and
// protects arbitrary payloads to check the round trip.
func FuzzUnprotect(f *testing.F) {
	f.Add(unhex(f, v1Vectors.chachaPacket), 1, uint64(vecChachaPN), []byte{1})
	f.Add(unhex(f, v2Vectors.serverPacket), 18, uint64(1), []byte("0123456789"))
	f.Add([]byte{0xc0}, 0, uint64(0), []byte{})
	keys := make([]*Keys, 0, len(allSuites))
	for _, s := range allSuites {
		k, err := New(s, testSecret(f, s, 21), Version1)
		if err != nil {
			f.Fatal(err)
		}
		keys = append(keys, k)
	}
	f.Fuzz(func(t *testing.T, data []byte, pnOffset int, pn uint64, payload []byte) {
		for i, k := range keys {
			if _, err := unprotect(k, bytes.Clone(data), pnOffset, 0); err == nil {
				t.Fatalf("%s: random datagram %x opened", tls.CipherSuiteName(allSuites[i]), data)
			}
			// Round trip: a short header with a 1-byte connection ID.
			pn &= MaxPacketNumber
			pkt := append([]byte{0x43, 0xaa, byte(pn >> 24), byte(pn >> 16), byte(pn >> 8), byte(pn)}, payload...)
			// The 4-byte packet number and the tag always leave room
			// for the sample, so Protect must succeed.
			out, err := k.Protect(bytes.Clone(pkt), 2, pn)
			if err != nil {
				t.Fatalf("Protect: %v", err)
			}
			got, err := unprotect(k, out, 2, pn)
			if err != nil || !bytes.Equal(got, payload) {
				t.Fatalf("round trip of %x: %x, %v", payload, got, err)
			}
		}
	})
}
