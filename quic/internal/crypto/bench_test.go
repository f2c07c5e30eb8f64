package crypto

import (
	"bytes"
	"crypto/tls"
	"math/rand/v2"
	"testing"
)

// benchPacketLen is the size of a full-sized packet on a 1280-byte path
// MTU, the usual QUIC datagram.
const benchPacketLen = 1200

// benchPacket returns a short-header packet of benchPacketLen bytes once
// sealed, its plaintext form, and its packet number offset.
func benchPacket(b *testing.B) (plain []byte, pnOffset int) {
	r := rand.New(rand.NewPCG(1200, 1))
	plain, pnOffset = testPacket(r, false, 2, 1, benchPacketLen-1-8-2-TagLen)
	if len(plain)+TagLen != benchPacketLen {
		b.Fatalf("bench packet is %d bytes sealed", len(plain)+TagLen)
	}
	return plain, pnOffset
}

func reportGbps(b *testing.B, bytesPerOp int) {
	b.ReportMetric(float64(bytesPerOp)*8*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gbit/s")
}

// BenchmarkSeal measures AEAD sealing of a 1200-byte packet in place.
func BenchmarkSeal(b *testing.B) {
	for _, s := range allSuites {
		b.Run(tls.CipherSuiteName(s), func(b *testing.B) {
			keys, err := New(s, testSecret(b, s, 1), Version1)
			if err != nil {
				b.Fatal(err)
			}
			pk := keys.Packet()
			pk.limit = ^uint64(0) // the benchmark seals more than 2^23 packets
			plain, pnOffset := benchPacket(b)
			buf := make([]byte, len(plain), benchPacketLen)
			copy(buf, plain)
			b.SetBytes(benchPacketLen)
			b.ReportAllocs()
			pn := uint64(0)
			for b.Loop() {
				// Sealing in place again re-encrypts the ciphertext: the
				// bytes differ, the work is the same.
				if _, err := pk.Seal(buf[:len(plain)], pnOffset+2, pn); err != nil {
					b.Fatal(err)
				}
				pn++
			}
			reportGbps(b, benchPacketLen)
		})
	}
}

// BenchmarkOpen measures AEAD opening of a 1200-byte packet in place. Each
// iteration first restores the ciphertext with a 1200-byte copy.
func BenchmarkOpen(b *testing.B) {
	for _, s := range allSuites {
		b.Run(tls.CipherSuiteName(s), func(b *testing.B) {
			keys, err := New(s, testSecret(b, s, 1), Version1)
			if err != nil {
				b.Fatal(err)
			}
			pk := keys.Packet()
			plain, pnOffset := benchPacket(b)
			sealed, err := pk.Seal(bytes.Clone(plain), pnOffset+2, 7)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, len(sealed))
			b.SetBytes(benchPacketLen)
			b.ReportAllocs()
			for b.Loop() {
				copy(buf, sealed)
				if _, err := pk.Open(buf, pnOffset+2, 7); err != nil {
					b.Fatal(err)
				}
			}
			reportGbps(b, benchPacketLen)
		})
	}
}

// BenchmarkHeaderProtection measures applying and removing header
// protection (one mask computation each).
func BenchmarkHeaderProtection(b *testing.B) {
	for _, s := range allSuites {
		keys, err := New(s, testSecret(b, s, 1), Version1)
		if err != nil {
			b.Fatal(err)
		}
		hk := keys.Header()
		plain, pnOffset := benchPacket(b)
		pkt := append(bytes.Clone(plain), make([]byte, TagLen)...)
		b.Run("Apply/"+tls.CipherSuiteName(s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := hk.Apply(pkt, pnOffset); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Remove/"+tls.CipherSuiteName(s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := hk.Remove(pkt, pnOffset); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProtect measures the whole send path (seal and header
// protection) of a 1200-byte packet.
func BenchmarkProtect(b *testing.B) {
	for _, s := range allSuites {
		b.Run(tls.CipherSuiteName(s), func(b *testing.B) {
			keys, err := New(s, testSecret(b, s, 1), Version1)
			if err != nil {
				b.Fatal(err)
			}
			keys.Packet().limit = ^uint64(0)
			plain, pnOffset := benchPacket(b)
			buf := make([]byte, len(plain), benchPacketLen)
			b.SetBytes(benchPacketLen)
			b.ReportAllocs()
			pn := uint64(0)
			for b.Loop() {
				copy(buf, plain)
				if _, err := keys.Protect(buf[:len(plain)], pnOffset, pn); err != nil {
					b.Fatal(err)
				}
				pn++
			}
			reportGbps(b, benchPacketLen)
		})
	}
}
