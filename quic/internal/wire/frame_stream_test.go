package wire

import (
	"bytes"
	"testing"
)

// TestStreamFrameAppendHeader checks that a header from AppendHeader
// followed by the data is the frame Append writes, and that HeaderLen
// says its size.
func TestStreamFrameAppendHeader(t *testing.T) {
	data := bytes.Repeat([]byte{0xa5}, 1400)
	for _, f := range []StreamFrame{
		{StreamID: 0, Offset: 0, Data: data[:10], DataLenPresent: true},
		{StreamID: 3, Offset: 1 << 20, Data: data, DataLenPresent: true, Fin: true},
		{StreamID: 1 << 40, Offset: 1<<62 - 1 - 1400, Data: data, DataLenPresent: true},
		{StreamID: 7, Offset: 64, Data: data[:63]},
		{StreamID: 7, Offset: 64, Fin: true, DataLenPresent: true},
	} {
		want, err := f.Append([]byte{0xff})
		if err != nil {
			t.Fatalf("%+v: Append: %v", f, err)
		}
		hdr := f
		hdr.Data = nil
		got, err := hdr.AppendHeader([]byte{0xff}, len(f.Data))
		if err != nil {
			t.Fatalf("%+v: AppendHeader: %v", f, err)
		}
		if len(got)-1 != hdr.HeaderLen(len(f.Data)) {
			t.Errorf("%+v: AppendHeader wrote %d bytes, HeaderLen says %d", f, len(got)-1, hdr.HeaderLen(len(f.Data)))
		}
		if got = append(got, f.Data...); !bytes.Equal(got, want) {
			t.Errorf("%+v: header and data %x, Append %x", f, got, want)
		}
		if f.Len() != len(want)-1 {
			t.Errorf("%+v: Len %d, Append wrote %d", f, f.Len(), len(want)-1)
		}
	}
}

// TestStreamFrameAppendHeaderRejects checks that AppendHeader refuses what
// cannot be encoded, and leaves the buffer alone.
func TestStreamFrameAppendHeaderRejects(t *testing.T) {
	for _, c := range []struct {
		f StreamFrame
		n int
	}{
		{StreamFrame{StreamID: MaxVarint + 1}, 1},
		{StreamFrame{Offset: MaxVarint - 10, DataLenPresent: true}, 11},
		{StreamFrame{StreamID: 4}, -1},
	} {
		b, err := c.f.AppendHeader([]byte{1, 2}, c.n)
		if err == nil {
			t.Errorf("%+v with %d bytes: no error", c.f, c.n)
		}
		if !bytes.Equal(b, []byte{1, 2}) {
			t.Errorf("%+v with %d bytes: buffer changed to %x", c.f, c.n, b)
		}
	}
}
