//go:build amd64 && !purego

#include "textflag.h"
#include "kernel_amd64.h"

// Fused multi-input kernels: out ^= c0*in0 ^ c1*in1 ^ ..., one pass over
// out for four or eight inputs. The tables of input k live in Z(16+2k)
// (low nibble) and Z(17+2k) (high nibble); Z0 accumulates the block of out.

// LOADTABLES(k, lo, hi) broadcasts gfNibbleTables[cs[k]] into lo and hi;
// AX is &gfNibbleTables and DX is cs.
#define LOADTABLES(k, lo, hi) \
	MOVBQZX k(DX), BX; \
	SHLQ    $5, BX; \
	VBROADCASTI32X4 (AX)(BX*1), lo; \
	VBROADCASTI32X4 16(AX)(BX*1), hi

// ACC64(p, lo, hi) adds c*p[AX:AX+64] into Z0.
#define ACC64(p, lo, hi) \
	VMOVDQU64 (p)(AX*1), Z1; \
	NIBBLES512(Z1, Z2); \
	LOOKUP512(Z1, Z2, lo, hi); \
	VPTERNLOGQ $0x96, Z2, Z1, Z0

// ACCTAIL(p, lo, hi) is ACC64 for the bytes selected by K1.
#define ACCTAIL(p, lo, hi) \
	VMOVDQU8.Z (p)(AX*1), K1, Z1; \
	NIBBLES512(Z1, Z2); \
	LOOKUP512(Z1, Z2, lo, hi); \
	VPTERNLOGQ $0x96, Z2, Z1, Z0

// func mulAdd4AVX512(tables *[256][32]byte, cs *[4]byte, ins *[4][]byte, out []byte)
TEXT ·mulAdd4AVX512(SB), NOSPLIT, $0-48
	MOVQ tables+0(FP), AX
	MOVQ cs+8(FP), DX
	LOADTABLES(0, Z16, Z17)
	LOADTABLES(1, Z18, Z19)
	LOADTABLES(2, Z20, Z21)
	LOADTABLES(3, Z22, Z23)
	MOVQ ins+16(FP), BX
	MOVQ 0(BX), SI
	MOVQ 24(BX), DX
	MOVQ 48(BX), R8
	MOVQ 72(BX), R9
	MOVL $0x0f, BX
	VPBROADCASTB BX, Z15
	MOVQ out_base+24(FP), DI
	MOVQ out_len+32(FP), CX
	XORQ AX, AX

multi4loop:
	LEAQ 64(AX), BX
	CMPQ BX, CX
	JA   multi4tail
	VMOVDQU64 (DI)(AX*1), Z0
	ACC64(SI, Z16, Z17)
	ACC64(DX, Z18, Z19)
	ACC64(R8, Z20, Z21)
	ACC64(R9, Z22, Z23)
	VMOVDQU64 Z0, (DI)(AX*1)
	MOVQ BX, AX
	JMP  multi4loop

multi4tail:
	SUBQ AX, CX
	JZ   multi4done
	TAILMASK(BX)
	VMOVDQU8.Z (DI)(AX*1), K1, Z0
	ACCTAIL(SI, Z16, Z17)
	ACCTAIL(DX, Z18, Z19)
	ACCTAIL(R8, Z20, Z21)
	ACCTAIL(R9, Z22, Z23)
	VMOVDQU8 Z0, K1, (DI)(AX*1)

multi4done:
	VZEROUPPER
	RET

// func mulAdd8AVX512(tables *[256][32]byte, cs *[8]byte, ins *[8][]byte, out []byte)
TEXT ·mulAdd8AVX512(SB), NOSPLIT, $0-48
	MOVQ tables+0(FP), AX
	MOVQ cs+8(FP), DX
	LOADTABLES(0, Z16, Z17)
	LOADTABLES(1, Z18, Z19)
	LOADTABLES(2, Z20, Z21)
	LOADTABLES(3, Z22, Z23)
	LOADTABLES(4, Z24, Z25)
	LOADTABLES(5, Z26, Z27)
	LOADTABLES(6, Z28, Z29)
	LOADTABLES(7, Z30, Z31)
	MOVQ ins+16(FP), BX
	MOVQ 0(BX), SI
	MOVQ 24(BX), DX
	MOVQ 48(BX), R8
	MOVQ 72(BX), R9
	MOVQ 96(BX), R10
	MOVQ 120(BX), R11
	MOVQ 144(BX), R12
	MOVQ 168(BX), R13
	MOVL $0x0f, BX
	VPBROADCASTB BX, Z15
	MOVQ out_base+24(FP), DI
	MOVQ out_len+32(FP), CX
	XORQ AX, AX

multi8loop:
	LEAQ 64(AX), BX
	CMPQ BX, CX
	JA   multi8tail
	VMOVDQU64 (DI)(AX*1), Z0
	ACC64(SI, Z16, Z17)
	ACC64(DX, Z18, Z19)
	ACC64(R8, Z20, Z21)
	ACC64(R9, Z22, Z23)
	ACC64(R10, Z24, Z25)
	ACC64(R11, Z26, Z27)
	ACC64(R12, Z28, Z29)
	ACC64(R13, Z30, Z31)
	VMOVDQU64 Z0, (DI)(AX*1)
	MOVQ BX, AX
	JMP  multi8loop

multi8tail:
	SUBQ AX, CX
	JZ   multi8done
	TAILMASK(BX)
	VMOVDQU8.Z (DI)(AX*1), K1, Z0
	ACCTAIL(SI, Z16, Z17)
	ACCTAIL(DX, Z18, Z19)
	ACCTAIL(R8, Z20, Z21)
	ACCTAIL(R9, Z22, Z23)
	ACCTAIL(R10, Z24, Z25)
	ACCTAIL(R11, Z26, Z27)
	ACCTAIL(R12, Z28, Z29)
	ACCTAIL(R13, Z30, Z31)
	VMOVDQU8 Z0, K1, (DI)(AX*1)

multi8done:
	VZEROUPPER
	RET
