package wire

import (
	"bytes"
	"testing"
)

// benchAckFrame is an ACK with 32 ranges, as a receiver reports under
// scattered loss.
func benchAckFrame() *AckFrame {
	f := &AckFrame{AckDelay: 1234, HasECN: true, ECN: ECNCounts{ECT0: 100000, CE: 3}}
	top := uint64(1_000_000)
	for range 32 {
		f.Ranges = append(f.Ranges, AckRange{Smallest: top - 40, Largest: top})
		top -= 45
	}
	return f
}

func BenchmarkAckFrameAppend(b *testing.B) {
	f := benchAckFrame()
	buf := make([]byte, 0, 1500)
	b.SetBytes(int64(f.Len()))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = f.Append(buf[:0])
	}
}

func BenchmarkAckFrameParse(b *testing.B) {
	enc, _ := benchAckFrame().Append(nil)
	var p FrameParser
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.Parse(enc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStreamFrameAppend(b *testing.B) {
	f := &StreamFrame{StreamID: 4, Offset: 1 << 24, Data: bytes.Repeat([]byte{1}, 1200), DataLenPresent: true}
	buf := make([]byte, 0, 1500)
	b.SetBytes(int64(len(f.Data)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = f.Append(buf[:0])
	}
}

func BenchmarkStreamFrameParse(b *testing.B) {
	f := &StreamFrame{StreamID: 4, Offset: 1 << 24, Data: bytes.Repeat([]byte{1}, 1200), DataLenPresent: true}
	enc, _ := f.Append(nil)
	var p FrameParser
	b.SetBytes(int64(len(f.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.Parse(enc); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHotPathAllocs pins the zero-allocation property of the ACK and
// STREAM paths that the benchmarks measure.
func TestHotPathAllocs(t *testing.T) {
	ack := benchAckFrame()
	stream := &StreamFrame{StreamID: 4, Offset: 9, Data: []byte("payload"), DataLenPresent: true}
	buf := make([]byte, 0, 1500)
	ackEnc, _ := ack.Append(nil)
	streamEnc, _ := stream.Append(nil)
	var p FrameParser
	p.Parse(ackEnc) // sizes the range slice once
	for name, fn := range map[string]func(){
		"ack append":      func() { buf, _ = ack.Append(buf[:0]) },
		"stream append":   func() { buf, _ = stream.Append(buf[:0]) },
		"ack parse":       func() { p.Parse(ackEnc) },
		"stream parse":    func() { p.Parse(streamEnc) },
		"stream parse fn": func() { ParseStreamFrame(streamEnc) },
	} {
		if allocs := testing.AllocsPerRun(100, fn); allocs != 0 {
			t.Errorf("%s: %v allocations per run, want 0", name, allocs)
		}
	}
}
