package fec

import (
	"errors"
	"fmt"
)

// Coding coefficients of RFC 8681 section 3.6. A repair symbol is
// sum(cc[j] * src[j]) over its encoding window; cc is never transmitted,
// the receiver regenerates it from the Repair_Key, the density threshold
// DT and the window size NSS carried in the Repair FEC Payload ID.

// MaxDT is the largest density threshold (RFC 8681 section 3.6): DT = 15
// gives fully dense rows, smaller values a mean share of (DT+1)/16
// non-zero coefficients.
const MaxDT = 15

var (
	// ErrBadDT reports a density threshold above MaxDT.
	ErrBadDT = errors.New("fec: density threshold DT above 15")
	// ErrBadFieldSize reports a field size other than GF(2) (m = 1) or
	// GF(2^8) (m = 8).
	ErrBadFieldSize = errors.New("fec: field size m must be 1 or 8")
)

// GenerateCodingCoefficients fills cc with the coding coefficients of RFC
// 8681 section 3.6 for repairKey, density threshold dt (0..15) and field
// size m (1 for GF(2), 8 for GF(2^8)); len(cc) is the window size. It
// returns an error for dt > 15 or another m, leaving cc untouched.
func GenerateCodingCoefficients(repairKey uint16, cc []byte, dt uint8, m int) error {
	if dt > MaxDT {
		return fmt.Errorf("%w: %d", ErrBadDT, dt)
	}
	switch m {
	case 1:
		generateBinaryCoefficients(repairKey, cc, dt)
	case 8:
		generateCoefficients(repairKey, cc, dt)
	default:
		return fmt.Errorf("%w: %d", ErrBadFieldSize, m)
	}
	return nil
}

// generateCoefficients is the GF(2^8) case of GenerateCodingCoefficients,
// without the parameter checks (dt must be <= 15). The codec calls it once
// per repair on both sides, for windows of hundreds of symbols, so the
// TinyMT32 step is written out here on scalars that the compiler keeps in
// registers; it is TinyMT32.Next step for step (the tests compare them).
//
// For dt = 15 every coefficient is a rand256 draw, redrawn while zero, so
// that every source symbol of the window takes part. Otherwise each
// coefficient first draws rand16: above dt it is zero, else a non-zero
// rand256 follows.
func generateCoefficients(repairKey uint16, cc []byte, dt uint8) {
	var prng TinyMT32
	prng.seed(uint32(repairKey))
	s0, s1, s2, s3 := prng.status[0], prng.status[1], prng.status[2], prng.status[3]
	sparse := dt != MaxDT
	gate := sparse // the next draw is the rand16 gate of a coefficient
	for i := 0; i < len(cc); {
		x := (s0 & tinyMTMask) ^ s1 ^ s2
		x ^= x << tinyMTSh0
		y := s3 ^ (s3 >> tinyMTSh0) ^ x
		lowBit := -(y & 1)
		s0, s1, s2, s3 = s1, s2^(lowBit&tinyMTMat1), x^(y<<tinyMTSh1)^(lowBit&tinyMTMat2), y
		t1 := s0 + (s2 >> tinyMTSh8)
		out := s3 ^ t1 ^ (-(t1 & 1) & tinyMTTmat)
		switch {
		case gate && uint8(out&0xF) > dt:
			cc[i] = 0
			i++
		case gate:
			gate = false
		case byte(out) != 0:
			cc[i] = byte(out)
			i++
			gate = sparse
		}
	}
}

// generateBinaryCoefficients is the GF(2) case: coefficients are 0 or 1,
// and DT = 15 means all ones without drawing from the PRNG.
func generateBinaryCoefficients(repairKey uint16, cc []byte, dt uint8) {
	if dt == MaxDT {
		for i := range cc {
			cc[i] = 1
		}
		return
	}
	var prng TinyMT32
	prng.seed(uint32(repairKey))
	for i := range cc {
		if prng.Rand16() <= dt {
			cc[i] = 1
		} else {
			cc[i] = 0
		}
	}
}
