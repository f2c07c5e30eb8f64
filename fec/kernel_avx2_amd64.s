//go:build amd64 && !purego

#include "textflag.h"

// AVX2 nibble-table kernels (see kernel_amd64.h for the method), for CPUs
// without AVX-512BW. AVX2 has no byte-masked loads or stores, so these
// kernels require len(in) >= 32 and finish a partial last block by
// processing the final 32 bytes again as one window, with the bytes
// already done masked out of the update.

// tailWindowMask: 32 zero bytes then 32 0xFF bytes. The 32 bytes at
// offset r select the last r bytes of a 32-byte window.
DATA tailWindowMask<>+0(SB)/8, $0
DATA tailWindowMask<>+8(SB)/8, $0
DATA tailWindowMask<>+16(SB)/8, $0
DATA tailWindowMask<>+24(SB)/8, $0
DATA tailWindowMask<>+32(SB)/8, $-1
DATA tailWindowMask<>+40(SB)/8, $-1
DATA tailWindowMask<>+48(SB)/8, $-1
DATA tailWindowMask<>+56(SB)/8, $-1
GLOBL tailWindowMask<>(SB), RODATA|NOPTR, $64

// PRODUCT32(x, t): x = c*x with tables Y13/Y14 and nibble mask Y15.
#define PRODUCT32(x, t) \
	VPSRLQ  $4, x, t; \
	VPAND   Y15, x, x; \
	VPAND   Y15, t, t; \
	VPSHUFB x, Y13, x; \
	VPSHUFB t, Y14, t; \
	VPXOR   t, x, x

// MULADD32(off, x, t): 32 bytes of out ^= c*in.
#define MULADD32(off, x, t) \
	VMOVDQU off(SI), x; \
	PRODUCT32(x, t); \
	VPXOR   off(DI), x, x; \
	VMOVDQU x, off(DI)

// MUL32(off, x, t): 32 bytes of out = c*in.
#define MUL32(off, x, t) \
	VMOVDQU off(SI), x; \
	PRODUCT32(x, t); \
	VMOVDQU x, off(DI)

// SETUP256 loads the tables of tab+0(FP) into Y13/Y14, the nibble mask
// into Y15, and in/out/len into SI/DI/CX. The mask goes through X15 with
// the VEX-encoded VMOVQ: the legacy SSE MOVQ there cost about 120 ns a
// call (an SSE/AVX state transition), four times the work of a 1500-byte
// region, and made this kernel slower than klauspost's.
#define SETUP256 \
	MOVQ tab+0(FP), AX; \
	VBROADCASTI128 (AX), Y13; \
	VBROADCASTI128 16(AX), Y14; \
	MOVQ $0x0f, AX; \
	VMOVQ AX, X15; \
	VPBROADCASTB X15, Y15; \
	MOVQ in_base+8(FP), SI; \
	MOVQ in_len+16(FP), CX; \
	MOVQ out_base+32(FP), DI

// TAILWINDOW moves SI and DI back so that the 32 bytes at (SI) and (DI)
// end where the CX (1..31) remaining bytes end, and loads into Y12 the
// mask that selects those last CX bytes.
#define TAILWINDOW \
	LEAQ    tailWindowMask<>(SB), AX; \
	VMOVDQU (AX)(CX*1), Y12; \
	LEAQ    -32(SI)(CX*1), SI; \
	LEAQ    -32(DI)(CX*1), DI

// func mulAddAVX2(tab *[32]byte, in, out []byte)
TEXT ·mulAddAVX2(SB), NOSPLIT, $0-56
	SETUP256

muladd128:
	CMPQ CX, $128
	JB   muladd32
	MULADD32(0, Y0, Y1)
	MULADD32(32, Y2, Y3)
	MULADD32(64, Y4, Y5)
	MULADD32(96, Y6, Y7)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $128, CX
	JMP  muladd128

muladd32:
	CMPQ CX, $32
	JB   muladdtail
	MULADD32(0, Y0, Y1)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  muladd32

muladdtail:
	TESTQ CX, CX
	JZ    muladddone
	TAILWINDOW
	VMOVDQU (SI), Y0
	PRODUCT32(Y0, Y1)
	VPAND   Y12, Y0, Y0
	VPXOR   (DI), Y0, Y0
	VMOVDQU Y0, (DI)

muladddone:
	VZEROUPPER
	RET

// func mulAVX2(tab *[32]byte, in, out []byte)
TEXT ·mulAVX2(SB), NOSPLIT, $0-56
	SETUP256

mul128:
	CMPQ CX, $128
	JB   mul32
	MUL32(0, Y0, Y1)
	MUL32(32, Y2, Y3)
	MUL32(64, Y4, Y5)
	MUL32(96, Y6, Y7)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $128, CX
	JMP  mul128

mul32:
	CMPQ CX, $32
	JB   multail
	MUL32(0, Y0, Y1)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  mul32

multail:
	TESTQ CX, CX
	JZ    muldone
	TAILWINDOW
	VMOVDQU (SI), Y0
	PRODUCT32(Y0, Y1)
	// Keep the bytes already written (in may be out, so they cannot be
	// recomputed) and take the product for the last CX bytes.
	VMOVDQU   (DI), Y2
	VPBLENDVB Y12, Y0, Y2, Y0
	VMOVDQU   Y0, (DI)

muldone:
	VZEROUPPER
	RET

// XOR32(off, x): 32 bytes of out ^= in.
#define XOR32(off, x) \
	VMOVDQU off(SI), x; \
	VPXOR   off(DI), x, x; \
	VMOVDQU x, off(DI)

// func xorAVX2(in, out []byte)
TEXT ·xorAVX2(SB), NOSPLIT, $0-48
	MOVQ in_base+0(FP), SI
	MOVQ in_len+8(FP), CX
	MOVQ out_base+24(FP), DI

xor128:
	CMPQ CX, $128
	JB   xor32
	XOR32(0, Y0)
	XOR32(32, Y1)
	XOR32(64, Y2)
	XOR32(96, Y3)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $128, CX
	JMP  xor128

xor32:
	CMPQ CX, $32
	JB   xortail
	XOR32(0, Y0)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JMP  xor32

xortail:
	TESTQ CX, CX
	JZ    xordone
	TAILWINDOW
	VMOVDQU (SI), Y0
	VPAND   Y12, Y0, Y0
	VPXOR   (DI), Y0, Y0
	VMOVDQU Y0, (DI)

xordone:
	VZEROUPPER
	RET

// Fused four-input kernel: out ^= c0*in0 ^ c1*in1 ^ c2*in2 ^ c3*in3, one
// pass over out. The tables of input k live in Y(4+2k) (low nibble) and
// Y(5+2k) (high nibble); Y0 accumulates the block of out.

// LOADTABLES256(k, lo, hi) broadcasts gfNibbleTables[cs[k]] into lo and
// hi; AX is &gfNibbleTables and DX is cs.
#define LOADTABLES256(k, lo, hi) \
	MOVBQZX        k(DX), BX; \
	SHLQ           $5, BX; \
	VBROADCASTI128 (AX)(BX*1), lo; \
	VBROADCASTI128 16(AX)(BX*1), hi

// ACC32(p, lo, hi, acc) adds c*p[AX:AX+32] into acc.
#define ACC32(p, lo, hi, acc) \
	VMOVDQU (p)(AX*1), Y1; \
	VPSRLQ  $4, Y1, Y2; \
	VPAND   Y15, Y1, Y1; \
	VPAND   Y15, Y2, Y2; \
	VPSHUFB Y1, lo, Y1; \
	VPSHUFB Y2, hi, Y2; \
	VPXOR   Y2, Y1, Y1; \
	VPXOR   Y1, acc, acc

// func mulAdd4AVX2(tables *[256][32]byte, cs *[4]byte, ins *[4][]byte, out []byte)
TEXT ·mulAdd4AVX2(SB), NOSPLIT, $0-48
	MOVQ tables+0(FP), AX
	MOVQ cs+8(FP), DX
	LOADTABLES256(0, Y4, Y5)
	LOADTABLES256(1, Y6, Y7)
	LOADTABLES256(2, Y8, Y9)
	LOADTABLES256(3, Y10, Y11)
	MOVQ ins+16(FP), BX
	MOVQ 0(BX), SI
	MOVQ 24(BX), DX
	MOVQ 48(BX), R8
	MOVQ 72(BX), R9
	MOVQ $0x0f, BX
	VMOVQ BX, X15
	VPBROADCASTB X15, Y15
	MOVQ out_base+24(FP), DI
	MOVQ out_len+32(FP), CX
	XORQ AX, AX

multi4loop:
	LEAQ 32(AX), BX
	CMPQ BX, CX
	JA   multi4tail
	VMOVDQU (DI)(AX*1), Y0
	ACC32(SI, Y4, Y5, Y0)
	ACC32(DX, Y6, Y7, Y0)
	ACC32(R8, Y8, Y9, Y0)
	ACC32(R9, Y10, Y11, Y0)
	VMOVDQU Y0, (DI)(AX*1)
	MOVQ BX, AX
	JMP  multi4loop

multi4tail:
	// CX-AX bytes (0..31) remain: the last 32 bytes again as one window,
	// the products of the bytes already done masked out.
	MOVQ    CX, BX
	SUBQ    AX, BX
	JZ      multi4done
	LEAQ    tailWindowMask<>(SB), R10
	VMOVDQU (R10)(BX*1), Y12
	LEAQ    -32(CX), AX
	VPXOR   Y13, Y13, Y13
	ACC32(SI, Y4, Y5, Y13)
	ACC32(DX, Y6, Y7, Y13)
	ACC32(R8, Y8, Y9, Y13)
	ACC32(R9, Y10, Y11, Y13)
	VPAND   Y12, Y13, Y13
	VPXOR   (DI)(AX*1), Y13, Y13
	VMOVDQU Y13, (DI)(AX*1)

multi4done:
	VZEROUPPER
	RET
