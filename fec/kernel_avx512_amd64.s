//go:build amd64 && !purego

#include "textflag.h"
#include "kernel_amd64.h"

// MULADD64(off, x, t): 64 bytes of out ^= c*in at off(SI) and off(DI);
// the three-way XOR reads out straight from memory.
#define MULADD64(off, x, t) \
	VMOVDQU64 off(SI), x; \
	NIBBLES512(x, t); \
	LOOKUP512(x, t, Z13, Z14); \
	VPTERNLOGQ $0x96, off(DI), t, x; \
	VMOVDQU64 x, off(DI)

// MUL64(off, x, t): 64 bytes of out = c*in.
#define MUL64(off, x, t) \
	VMOVDQU64 off(SI), x; \
	NIBBLES512(x, t); \
	LOOKUP512(x, t, Z13, Z14); \
	VPXORQ t, x, x; \
	VMOVDQU64 x, off(DI)

// SETUP512 loads the tables of tab+0(FP) into Z13/Z14, the nibble mask
// into Z15, and in/out/len into SI/DI/CX.
#define SETUP512 \
	MOVQ tab+0(FP), AX; \
	VBROADCASTI32X4 (AX), Z13; \
	VBROADCASTI32X4 16(AX), Z14; \
	MOVL $0x0f, AX; \
	VPBROADCASTB AX, Z15; \
	MOVQ in_base+8(FP), SI; \
	MOVQ in_len+16(FP), CX; \
	MOVQ out_base+32(FP), DI

// func mulAddAVX512(tab *[32]byte, in, out []byte)
TEXT ·mulAddAVX512(SB), NOSPLIT, $0-56
	SETUP512

muladd256:
	CMPQ CX, $256
	JB   muladd64
	MULADD64(0, Z0, Z1)
	MULADD64(64, Z2, Z3)
	MULADD64(128, Z4, Z5)
	MULADD64(192, Z6, Z7)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JMP  muladd256

muladd64:
	CMPQ CX, $64
	JB   muladdtail
	MULADD64(0, Z0, Z1)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	JMP  muladd64

muladdtail:
	TESTQ CX, CX
	JZ    muladddone
	TAILMASK(AX)
	VMOVDQU8.Z (SI), K1, Z0
	VMOVDQU8.Z (DI), K1, Z2
	NIBBLES512(Z0, Z1)
	LOOKUP512(Z0, Z1, Z13, Z14)
	VPTERNLOGQ $0x96, Z2, Z1, Z0
	VMOVDQU8   Z0, K1, (DI)

muladddone:
	VZEROUPPER
	RET

// func mulAVX512(tab *[32]byte, in, out []byte)
TEXT ·mulAVX512(SB), NOSPLIT, $0-56
	SETUP512

mul256:
	CMPQ CX, $256
	JB   mul64
	MUL64(0, Z0, Z1)
	MUL64(64, Z2, Z3)
	MUL64(128, Z4, Z5)
	MUL64(192, Z6, Z7)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JMP  mul256

mul64:
	CMPQ CX, $64
	JB   multail
	MUL64(0, Z0, Z1)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	JMP  mul64

multail:
	TESTQ CX, CX
	JZ    muldone
	TAILMASK(AX)
	VMOVDQU8.Z (SI), K1, Z0
	NIBBLES512(Z0, Z1)
	LOOKUP512(Z0, Z1, Z13, Z14)
	VPXORQ   Z1, Z0, Z0
	VMOVDQU8 Z0, K1, (DI)

muldone:
	VZEROUPPER
	RET

// XOR64(off, x): 64 bytes of out ^= in.
#define XOR64(off, x) \
	VMOVDQU64 off(SI), x; \
	VPXORQ    off(DI), x, x; \
	VMOVDQU64 x, off(DI)

// func xorAVX512(in, out []byte)
TEXT ·xorAVX512(SB), NOSPLIT, $0-48
	MOVQ in_base+0(FP), SI
	MOVQ in_len+8(FP), CX
	MOVQ out_base+24(FP), DI

xor256:
	CMPQ CX, $256
	JB   xor64
	XOR64(0, Z0)
	XOR64(64, Z1)
	XOR64(128, Z2)
	XOR64(192, Z3)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $256, CX
	JMP  xor256

xor64:
	CMPQ CX, $64
	JB   xortail
	XOR64(0, Z0)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	JMP  xor64

xortail:
	TESTQ CX, CX
	JZ    xordone
	TAILMASK(AX)
	VMOVDQU8.Z (SI), K1, Z0
	VMOVDQU8.Z (DI), K1, Z1
	VPXORQ     Z1, Z0, Z0
	VMOVDQU8   Z0, K1, (DI)

xordone:
	VZEROUPPER
	RET

