package fec

// TinyMT32 is the 32-bit Tiny Mersenne Twister of RFC 8682, the PRNG that
// RFC 8681 section 3.5 uses to derive coding coefficients from a repair
// key. Encoder and decoder must draw exactly the same sequence, so this is
// a bit-exact implementation with the parameter set the RFC mandates
// (RFC 8682 section 2.1): mat1 = 0x8f7011ee, mat2 = 0xfc78ff1f,
// tmat = 0x3793fdff.
//
// A TinyMT32 is a small value (16 bytes of state); the codec keeps one on
// the stack per repair, so NewTinyMT32's allocation is only for callers
// that want a pointer.
type TinyMT32 struct {
	status [4]uint32
}

const (
	tinyMTMat1 = 0x8f7011ee
	tinyMTMat2 = 0xfc78ff1f
	tinyMTTmat = 0x3793fdff

	tinyMTSh0  = 1
	tinyMTSh1  = 10
	tinyMTSh8  = 8
	tinyMTMask = 0x7fffffff

	// tinyMTMinLoop and tinyMTPreLoop are the seeding rounds of RFC 8682's
	// reference code (section 2.1): the state is mixed MIN_LOOP times from the seed, then
	// PRE_LOOP outputs are discarded.
	tinyMTMinLoop = 8
	tinyMTPreLoop = 8
)

// NewTinyMT32 returns a generator seeded with seed (tinymt32_init, RFC
// 8682 section 2.1).
func NewTinyMT32(seed uint32) *TinyMT32 {
	t := new(TinyMT32)
	t.seed(seed)
	return t
}

// seed initialises the state from seed exactly as tinymt32_init does.
func (t *TinyMT32) seed(seed uint32) {
	t.status = [4]uint32{seed, tinyMTMat1, tinyMTMat2, tinyMTTmat}
	for i := uint32(1); i < tinyMTMinLoop; i++ {
		prev := t.status[(i-1)&3]
		t.status[i&3] ^= i + 1812433253*(prev^(prev>>30))
	}
	t.certifyPeriod()
	for range tinyMTPreLoop {
		t.nextState()
	}
}

// certifyPeriod avoids the all-zero state, which would be a fixed point
// of the recurrence (RFC 8682 section 2.1, period_certification).
func (t *TinyMT32) certifyPeriod() {
	if t.status[0]&tinyMTMask == 0 && t.status[1] == 0 && t.status[2] == 0 && t.status[3] == 0 {
		t.status = [4]uint32{'T', 'I', 'N', 'Y'}
	}
}

// nextState advances the internal state by one step.
func (t *TinyMT32) nextState() {
	y := t.status[3]
	x := (t.status[0] & tinyMTMask) ^ t.status[1] ^ t.status[2]
	x ^= x << tinyMTSh0
	y ^= (y >> tinyMTSh0) ^ x
	t.status[0] = t.status[1]
	t.status[1] = t.status[2]
	t.status[2] = x ^ (y << tinyMTSh1)
	t.status[3] = y
	// -(y&1) is all ones when the low bit of y is set, zero otherwise.
	lowBit := -(y & 1)
	t.status[1] ^= lowBit & tinyMTMat1
	t.status[2] ^= lowBit & tinyMTMat2
}

// temper turns the state into an output word.
func (t *TinyMT32) temper() uint32 {
	t0 := t.status[3]
	t1 := t.status[0] + (t.status[2] >> tinyMTSh8)
	t0 ^= t1
	t0 ^= -(t1 & 1) & tinyMTTmat
	return t0
}

// Next returns the generator's next 32-bit output
// (tinymt32_generate_uint32).
func (t *TinyMT32) Next() uint32 {
	t.nextState()
	return t.temper()
}

// Rand16 returns a value in 0..15 (RFC 8681 section 3.5, tinymt32_rand16).
func (t *TinyMT32) Rand16() uint8 { return uint8(t.Next() & 0xF) }

// Rand256 returns a value in 0..255 (RFC 8681 section 3.5,
// tinymt32_rand256).
func (t *TinyMT32) Rand256() uint8 { return uint8(t.Next() & 0xFF) }
