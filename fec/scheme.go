package fec

// Every FEC scheme (the RLC codec with its controllers, and the baselines
// of package fec/baseline) is seen by its users through the two
// interfaces below: a sender-side SchemeEncoder that turns a sequence of
// source packets into repair packets, and a receiver-side SchemeDecoder
// that turns received source and repair packets into recovered source
// packets.
//
// Source packets are numbered by their Encoding Symbol ID (ESI): the n-th
// packet given to SchemeEncoder.AddSource has ESI n (mod 2^32), and the
// receiver learns it from the packet that carries the source (a QUIC
// packet number mapping, a tunnel header, the simulator). Repair packets
// are opaque bytes in the scheme's own format; they carry everything the
// decoder needs to use them.

// SchemeEncoder is the sender side of an FEC scheme.
type SchemeEncoder interface {
	// AddSource takes the next source packet (the encoder copies what it
	// keeps) and returns the repair packets to send right after it, in
	// order. The returned slices stay valid until the next call.
	AddSource(payload []byte) [][]byte
	// OnFeedback hands the encoder a loss report from the receiver. A
	// scheme that reacts to loss reports at once may return repair
	// packets to send now; fixed-rate schemes ignore feedback.
	OnFeedback(fb Feedback) [][]byte
}

// SchemeDecoder is the receiver side of an FEC scheme.
type SchemeDecoder interface {
	// AddSource gives the decoder a received source packet with its ESI.
	// It returns the source packets that this made recoverable.
	AddSource(esi uint32, payload []byte) []Recovered
	// AddRepair gives the decoder a received repair packet. It returns the
	// source packets that this made recoverable, or an error when the
	// repair is malformed or inconsistent with what the decoder knows (the
	// decoder's state is then unchanged).
	AddRepair(packet []byte) ([]Recovered, error)
}

// Recovered is a source packet rebuilt by a decoder: exactly the bytes the
// encoder was given for that ESI.
type Recovered struct {
	ESI  uint32
	Data []byte
}

// Feedback is the receiver's loss report over an interval of source ESIs,
// counted before FEC recovery. It is what HIRT's feedback TLV carries
// (window and losses), plus the burst structure that an adaptive
// controller needs to size its window.
type Feedback struct {
	// FirstESI and Sources describe the interval: ESIs FirstESI up to
	// FirstESI+Sources-1.
	FirstESI uint32
	Sources  int
	// Lost is the number of source packets of the interval that did not
	// arrive (whether or not FEC recovered them later).
	Lost int
	// Recovered is how many of the Lost packets the decoder has rebuilt.
	Recovered int
	// Bursts is the number of runs of consecutive lost ESIs, and
	// MaxBurst the length of the longest.
	Bursts   int
	MaxBurst int
	// Unrecovered is how many lost source ESIs, of this interval or an
	// earlier one still within the monitor's horizon, the receiver still
	// missed when it sent the report, and OldestUnrecovered the oldest of
	// them (meaningful when Unrecovered > 0). A controller that reacts to
	// losses uses them to aim repairs at what is still missing.
	Unrecovered       int
	OldestUnrecovered uint32
	// LossRun marks a report sent early, as soon as a run of losses ended,
	// rather than at the end of a full interval.
	LossRun bool
}

// LossRate is Lost/Sources, or 0 for an empty report.
func (f Feedback) LossRate() float64 {
	if f.Sources <= 0 {
		return 0
	}
	return float64(f.Lost) / float64(f.Sources)
}
