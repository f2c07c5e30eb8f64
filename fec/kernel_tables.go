package fec

// gfNibbleTables[c] holds the two 16-entry tables that let SIMD kernels
// multiply by the constant c with byte shuffles: bytes 0..15 are c*x for
// x = 0..15 (the low nibble), bytes 16..31 are c*(x<<4) (the high nibble).
// Because multiplication distributes over XOR,
// c*v = c*(v&0x0F) ^ c*(v&0xF0), so two table lookups per byte suffice.
//
// It is built by a package-level initializer from gfMulBitwise rather than
// from the init-time tables of gf.go, so it does not depend on the order in
// which the package's init functions run.
var gfNibbleTables = buildNibbleTables()

func buildNibbleTables() *[256][32]byte {
	var t [256][32]byte
	for c := range t {
		for x := 0; x < 16; x++ {
			t[c][x] = gfMulBitwise(byte(c), byte(x))
			t[c][16+x] = gfMulBitwise(byte(c), byte(x<<4))
		}
	}
	return &t
}

// gfMulBitwise multiplies in GF(2^8) modulo gfPoly by shift-and-add, with
// no tables: it is slow, but independent of the log/exp tables, which
// makes it both a safe source for other tables and a cross-check in tests.
func gfMulBitwise(a, b byte) byte {
	var product byte
	x := uint(a)
	for y := b; y != 0; y >>= 1 {
		if y&1 != 0 {
			product ^= byte(x)
		}
		x <<= 1
		if x&0x100 != 0 {
			x ^= gfPoly
		}
	}
	return product
}
