package baseline

import (
	"fmt"

	"github.com/satquic/satquic/fec"
)

// XOR parity, the simplest FEC baseline: after every k consecutive sources
// the encoder sends their XOR, which rebuilds one loss among them. It is
// the one-layer, interleave-1 case of Maelstrom's layered XOR
// (maelstrom.go), so it shares that code's encoder, peeling decoder and
// repair format (xorrepair.go); a block of k sources is a bin
// with window k. Overhead is exactly 1/k.

// xorConfig is the Maelstrom code equivalent to XOR parity over k sources.
func xorConfig(k int) (MaelstromConfig, error) {
	if k < 1 || k > 0xFFFF {
		return MaelstromConfig{}, fmt.Errorf("baseline: xor parity over %d sources: want 1..65535", k)
	}
	return MaelstromConfig{Interleaves: []int{1}, Window: k}, nil
}

// NewXOREncoder returns an encoder that sends one XOR parity after every k
// sources. Incomplete blocks are not flushed.
func NewXOREncoder(k int) (fec.SchemeEncoder, error) {
	cfg, err := xorConfig(k)
	if err != nil {
		return nil, err
	}
	return newLayeredXOREncoder(cfg), nil
}

// NewXORDecoder returns the decoder of NewXOREncoder(k): it rebuilds one
// lost source per block.
func NewXORDecoder(k int) (fec.SchemeDecoder, error) {
	cfg, err := xorConfig(k)
	if err != nil {
		return nil, err
	}
	return newPeelingDecoder(cfg), nil
}
