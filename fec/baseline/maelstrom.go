package baseline

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/satquic/satquic/fec"
)

// Maelstrom's layered interleaved XOR (Balakrishnan et al., NSDI 2008; the
// baseline of HIRT, seed 002 section VIII). A layer with interleave I
// splits the sources into I bins, source e going to bin e mod I, and every
// bin emits the XOR of each W consecutive sources it receives. Interleave
// 1 protects against isolated losses, a large interleave against bursts
// up to I long. Each layer costs exactly 1/W repairs per source, whatever
// the loss: the rate never adapts. The decoder (maelstrom_decoder.go)
// peels: any repair missing exactly one source rebuilds it, which may
// unlock other repairs, across layers.
//
// The ESI a bin works with is the encoder's 64-bit source count, so the
// ESIs of one repair are always evenly spaced mod 2^32, also across the
// 32-bit wrap. Incomplete bins are never flushed: this is a steady-state
// baseline, and the last sources of a finite stream stay unprotected.

// MaelstromConfig is a Maelstrom code: one layer per interleave, and the
// number of sources per repair shared by every layer. The paper writes it
// "M:1-20:20" for Interleaves {1, 20} and Window 20.
type MaelstromConfig struct {
	Interleaves []int // interleave I of each layer, distinct, 1..65535
	Window      int   // W: sources XORed into each repair, 1..65535
}

// maxRepairSpan bounds the ESIs one repair of a baseline may span
// (max(I)*W for Maelstrom), and with it the decoder's memory.
const maxRepairSpan = 1 << 16

// ParseMaelstrom parses the paper's notation "1-20:20" or "1-20-40:8",
// optionally prefixed with "M:".
func ParseMaelstrom(spec string) (MaelstromConfig, error) {
	body := strings.TrimPrefix(spec, "M:")
	layers, window, ok := strings.Cut(body, ":")
	if !ok {
		return MaelstromConfig{}, fmt.Errorf("baseline: maelstrom spec %q: want interleaves:window, e.g. 1-20:20", spec)
	}
	var cfg MaelstromConfig
	for field := range strings.SplitSeq(layers, "-") {
		i, err := strconv.Atoi(field)
		if err != nil {
			return MaelstromConfig{}, fmt.Errorf("baseline: maelstrom spec %q: interleave %q: %w", spec, field, err)
		}
		cfg.Interleaves = append(cfg.Interleaves, i)
	}
	w, err := strconv.Atoi(window)
	if err != nil {
		return MaelstromConfig{}, fmt.Errorf("baseline: maelstrom spec %q: window %q: %w", spec, window, err)
	}
	cfg.Window = w
	if err := cfg.Validate(); err != nil {
		return MaelstromConfig{}, fmt.Errorf("baseline: maelstrom spec %q: %w", spec, err)
	}
	return cfg, nil
}

// String returns the configuration in the notation ParseMaelstrom reads.
func (c MaelstromConfig) String() string {
	parts := make([]string, len(c.Interleaves))
	for i, v := range c.Interleaves {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, "-") + ":" + strconv.Itoa(c.Window)
}

// Validate checks that the configuration describes a usable code.
func (c MaelstromConfig) Validate() error {
	if len(c.Interleaves) == 0 {
		return fmt.Errorf("maelstrom: no layer")
	}
	if c.Window < 1 || c.Window > 0xFFFF {
		return fmt.Errorf("maelstrom: window %d outside 1..65535", c.Window)
	}
	for i, v := range c.Interleaves {
		if v < 1 || v > 0xFFFF {
			return fmt.Errorf("maelstrom: interleave %d outside 1..65535", v)
		}
		if slices.Contains(c.Interleaves[:i], v) {
			return fmt.Errorf("maelstrom: interleave %d repeated (the layer would send the same repairs twice)", v)
		}
		if v*c.Window > maxRepairSpan {
			return fmt.Errorf("maelstrom: layer %d:%d spans %d ESIs, above %d", v, c.Window, v*c.Window, maxRepairSpan)
		}
	}
	return nil
}

// Overhead is the number of repairs per source: one per layer every W.
func (c MaelstromConfig) Overhead() float64 {
	return float64(len(c.Interleaves)) / float64(c.Window)
}

// maxSpan is the largest number of ESIs one repair can span.
func (c MaelstromConfig) maxSpan() int {
	return slices.Max(c.Interleaves) * c.Window
}

// NewMaelstromEncoder returns the sender side of a Maelstrom code.
func NewMaelstromEncoder(cfg MaelstromConfig) (fec.SchemeEncoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return newLayeredXOREncoder(cfg), nil
}

// NewMaelstromDecoder returns the receiver side of a Maelstrom code.
func NewMaelstromDecoder(cfg MaelstromConfig) (fec.SchemeDecoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("baseline: %w", err)
	}
	return newPeelingDecoder(cfg), nil
}

// layeredXOREncoder is the encoder of every XOR baseline. It keeps one
// running XOR per bin and allocates only while bins grow to the packet
// size.
type layeredXOREncoder struct {
	window  int
	layers  [][]xorBin // layers[l][b]: bin b of layer l
	strides []uint16   // interleave of each layer
	sources uint64     // sources so far; the next ESI is its low 32 bits
	out     [][]byte
}

// xorBin accumulates one repair packet in place: header space followed by
// the running XOR of the padded coded symbols.
type xorBin struct {
	first   uint32 // ESI of the bin's first source in this repair
	count   int    // sources XORed so far
	symSize int    // current coded-symbol size of the XOR
	packet  []byte
}

func newLayeredXOREncoder(cfg MaelstromConfig) *layeredXOREncoder {
	e := &layeredXOREncoder{window: cfg.Window}
	for _, interleave := range cfg.Interleaves {
		e.layers = append(e.layers, make([]xorBin, interleave))
		e.strides = append(e.strides, uint16(interleave))
	}
	return e
}

// AddSource XORs the source into its bin of every layer and returns the
// repairs of the bins that reached W sources.
func (e *layeredXOREncoder) AddSource(payload []byte) [][]byte {
	esi := uint32(e.sources)
	e.out = e.out[:0]
	for l, bins := range e.layers {
		bin := &bins[e.sources%uint64(len(bins))]
		bin.add(esi, payload)
		if bin.count == e.window {
			e.out = append(e.out, bin.seal(e.strides[l]))
		}
	}
	e.sources++
	if len(e.out) == 0 {
		return nil
	}
	return e.out
}

// OnFeedback ignores loss reports: Maelstrom's rate is fixed.
func (e *layeredXOREncoder) OnFeedback(fec.Feedback) [][]byte { return nil }

// add XORs one source into the bin, starting a new repair if the last one
// was sealed.
func (b *xorBin) add(esi uint32, payload []byte) {
	if b.count == 0 {
		b.first, b.symSize = esi, 0
		b.packet = padTo(b.packet[:0], xorRepairHeaderLen)
	}
	if size := codedSize(payload); size > b.symSize {
		b.packet = padTo(b.packet[:xorRepairHeaderLen+b.symSize], xorRepairHeaderLen+size)
		b.symSize = size
	}
	xorCodedPayload(payload, b.packet[xorRepairHeaderLen:])
	b.count++
}

// seal writes the header and returns the finished repair packet; the bin
// starts over with its next source. The packet stays valid until then,
// that is until the encoder's next AddSource.
func (b *xorBin) seal(stride uint16) []byte {
	h := xorRepairHeader{
		First:  b.first,
		Stride: stride,
		Count:  uint16(b.count),
		MaxLen: uint16(b.symSize - codedLengthSize),
	}
	h.put(b.packet)
	b.count = 0
	return b.packet[:xorRepairHeaderLen+b.symSize]
}
