// Macros shared by the AVX-512 kernels (kernel_avx512_amd64.s and
// kernel_multi_amd64.s).
//
// All our kernels compute GF(2^8) region kernels with nibble tables: c*v = lo[v & 15] ^ hi[v >> 4],
// where lo and hi are the 16-byte tables of gfNibbleTables[c] broadcast to
// every 128-bit lane, so one VPSHUFB looks up 64 (AVX-512) or 32 (AVX2)
// bytes at once. VPSHUFB zeroes a byte whose index has bit 7 set, which is
// why both nibbles are masked with 0x0F (Z15/Y15) before the lookup.
//
// AVX-512 kernels handle any length: whole 64-byte blocks unmasked, then
// one block under a byte mask in K1, whose masked-off bytes are neither
// read (faults are suppressed) nor written.

// NIBBLES512(x, t) splits the bytes of x into low nibbles (left in x) and
// high nibbles (in t).
#define NIBBLES512(x, t) \
	VPSRLQ $4, x, t; \
	VPANDQ Z15, x, x; \
	VPANDQ Z15, t, t

// LOOKUP512(x, t, lo, hi) replaces the nibbles in x and t by their
// products from tables lo and hi.
#define LOOKUP512(x, t, lo, hi) \
	VPSHUFB x, lo, x; \
	VPSHUFB t, hi, t

// TAILMASK(r) sets K1 to the low CX bits (0 < CX < 64), using r as
// scratch.
#define TAILMASK(r) \
	MOVQ $1, r; \
	SHLQ CX, r; \
	DECQ r; \
	KMOVQ r, K1
