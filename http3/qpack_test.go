package http3

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/quic-go/qpack"
)

// encodeSection encodes fields with this package's encoder.
func encodeSection(fields []headerField) []byte {
	b := appendFieldSectionPrefix(nil)
	for _, f := range fields {
		b = appendFieldLine(b, f.Name, f.Value)
	}
	return b
}

// decodeWithQuicGo decodes a field section with quic-go's QPACK decoder,
// an implementation of its own.
func decodeWithQuicGo(p []byte) ([]headerField, error) {
	dec := qpack.NewDecoder().Decode(p)
	var out []headerField
	for {
		f, err := dec()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, headerField{f.Name, f.Value})
	}
}

// decodeLines decodes a field section with this package's decoder,
// without HTTP's checks.
func decodeLines(p []byte) ([]headerField, error) {
	var out []headerField
	err := decodeFieldLines(p, func(f headerField) error {
		out = append(out, f)
		return nil
	})
	return out, err
}

// TestQPACKStaticTable: every entry, sent indexed, is what quic-go's
// decoder finds at that index, and a name with a new value goes as a
// reference to the name's first entry.
func TestQPACKStaticTable(t *testing.T) {
	if len(qpackStatic) != 99 {
		t.Fatalf("%d static entries, RFC 9204 Appendix A has 99", len(qpackStatic))
	}
	for i, f := range qpackStatic {
		p := encodeSection([]headerField{f})
		if want := []byte{0, 0, 0xc0 | byte(i)}; i < 63 && !bytes.Equal(p, want) {
			t.Errorf("entry %d encoded as %x, want %x", i, p, want)
		}
		got, err := decodeWithQuicGo(p)
		if err != nil || len(got) != 1 || got[0] != f {
			t.Errorf("entry %d %q: quic-go decoded %v, %v", i, f, got, err)
		}
		other := headerField{f.Name, "x-other"}
		got, err = decodeWithQuicGo(encodeSection([]headerField{other}))
		if err != nil || len(got) != 1 || got[0] != other {
			t.Errorf("name of entry %d: quic-go decoded %v, %v", i, got, err)
		}
	}
}

// sampleFields are fields of every form: indexed, static name with a new
// value, literal name; empty, long and non-ASCII values.
var sampleFields = []headerField{
	{":method", "GET"},
	{":scheme", "https"},
	{":authority", "example.com:4433"},
	{":path", "/bytes/1024?x=1"},
	{"content-type", "application/octet-stream"},
	{"content-length", "1024"},
	{"x-custom", ""},
	{"x-long", strings.Repeat("abcdefgh", 40)},
	{"x-bytes", "\x01\xff\x7f caf\xc3\xa9"},
	{"user-agent", "satquic"},
}

// TestQPACKAgainstQuicGo: fields encoded here decode alike there, and
// fields encoded there decode alike here.
func TestQPACKAgainstQuicGo(t *testing.T) {
	got, err := decodeWithQuicGo(encodeSection(sampleFields))
	if err != nil || !slices.Equal(got, sampleFields) {
		t.Fatalf("quic-go decoded our section as %v, %v", got, err)
	}
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for _, f := range sampleFields {
		if err := enc.WriteField(qpack.HeaderField{Name: f.Name, Value: f.Value}); err != nil {
			t.Fatal(err)
		}
	}
	// Twice: the second time from the decoder's cache.
	for range 2 {
		got, err = decodeLines(buf.Bytes())
		if err != nil || !slices.Equal(got, sampleFields) {
			t.Fatalf("quic-go's section decoded as %v, %v", got, err)
		}
	}
}

// TestQPACKLiteralForms: field lines without Huffman coding, and
// integers that need continuation bytes, as another encoder may send
// them.
func TestQPACKLiteralForms(t *testing.T) {
	long := strings.Repeat("v", 300)
	p := []byte{0, 0}
	p = appendPrefixInt(p, 0x50, 4, 1) // :path, a plain value
	p = append(p, byte(len("/plain")))
	p = append(p, "/plain"...)
	p = appendPrefixInt(p, 0x20, 3, 5) // literal name, plain
	p = append(p, "x-abc"...)
	p = appendPrefixInt(p, 0x00, 7, uint64(len(long)))
	p = append(p, long...)
	p = appendPrefixInt(p, 0xc0, 6, 98) // an index beyond the 6-bit prefix
	got, err := decodeLines(p)
	want := []headerField{{":path", "/plain"}, {"x-abc", long}, {"x-frame-options", "sameorigin"}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("decoded %v, %v", got, err)
	}
	for _, v := range []uint64{0, 1, 14, 15, 16, 127, 128, 1 << 20, 1<<62 - 1} {
		b := appendPrefixInt(nil, 0x30, 4, v)
		got, rest, err := parsePrefixInt(b, 4)
		if err != nil || got != v || len(rest) != 0 {
			t.Errorf("%d: read back %d, %d bytes left, %v", v, got, len(rest), err)
		}
	}
}

// TestQPACKErrors: references to a dynamic table, an index past the
// static table, an integer that does not end, bad Huffman coding and
// truncations are errors, and a decoder makes them a connection error
// QPACK_DECOMPRESSION_FAILED.
func TestQPACKErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    []byte
		want error
	}{
		{"required insert count", []byte{0x01, 0x00}, errQPACKDynamic},
		{"indexed dynamic", []byte{0, 0, 0x80}, errQPACKDynamic},
		{"name reference dynamic", []byte{0, 0, 0x40, 0x00}, errQPACKDynamic},
		{"post-base indexed", []byte{0, 0, 0x10}, errQPACKDynamic},
		{"post-base name reference", []byte{0, 0, 0x00, 0x00}, errQPACKDynamic},
		{"static index 99", appendPrefixInt([]byte{0, 0}, 0xc0, 6, 99), errQPACKStaticIndex},
		{"name index 99", append(appendPrefixInt([]byte{0, 0}, 0x50, 4, 99), 0), errQPACKStaticIndex},
		{"endless integer", append([]byte{0, 0, 0xff}, bytes.Repeat([]byte{0xff}, 10)...), errQPACKOverflow},
		{"no prefix", nil, errQPACKTruncated},
		{"half a prefix", []byte{0}, errQPACKTruncated},
		{"value cut short", []byte{0, 0, 0x51, 0x05, 'a'}, errQPACKTruncated},
		{"no value", []byte{0, 0, 0x51}, errQPACKTruncated},
	} {
		if _, err := decodeLines(tc.p); err != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		_, err := decodeFieldSection(tc.p, 1000)
		wantCode(t, err, ErrCodeQPACKDecompressionFailed, true)
	}
	// A Huffman string that ends in a full byte of padding (RFC 7541
	// section 5.2).
	bad := []byte{0, 0, 0x51, 0x82, 0x1f, 0xff}
	if _, err := decodeLines(bad); err == nil {
		t.Error("bad Huffman padding decoded")
	}
	// A field the yield function refuses stops the section with its
	// error.
	stop := errors.New("stop")
	n := 0
	err := decodeFieldLines(encodeSection(sampleFields), func(headerField) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("refused field: %d fields, %v", n, err)
	}
}

// TestQPACKTruncatedPrefixes: every prefix of a valid section decodes to
// a prefix of its fields or fails, and never panics.
func TestQPACKTruncatedPrefixes(t *testing.T) {
	p := encodeSection(sampleFields)
	for i := range p {
		got, err := decodeLines(p[:i])
		if err == nil && (len(got) > len(sampleFields) || !slices.Equal(got, sampleFields[:len(got)])) {
			t.Fatalf("prefix of %d bytes decoded as %v", i, got)
		}
	}
}

// TestQPACKCacheBounded: a peer that sends ever-new values leaves the
// decoder's cache at its bound, and a value it repeats comes back equal.
func TestQPACKCacheBounded(t *testing.T) {
	d := &fieldDecoder{names: map[string]string{}, values: map[string]string{}}
	for i := range 3 * maxInternedStrings {
		v := fmt.Sprintf("value-%d", i)
		p := encodeSection([]headerField{{fmt.Sprintf("x-name-%d", i), v}})
		f, rest, err := d.fieldLine(p[2:])
		if err != nil || len(rest) != 0 || f.Value != v {
			t.Fatalf("%d: %v, %d bytes left, %v", i, f, len(rest), err)
		}
		if len(d.values) > maxInternedStrings || len(d.names) > maxInternedStrings {
			t.Fatalf("%d: cache of %d values and %d names", i, len(d.values), len(d.names))
		}
	}
	long := strings.Repeat("z", 2*maxInternedLen)
	if _, _, err := d.fieldLine(encodeSection([]headerField{{"x-long", long}})[2:]); err != nil {
		t.Fatal(err)
	}
	for k := range d.values {
		if len(k) > maxInternedLen {
			t.Errorf("kept a string of %d encoded bytes", len(k))
		}
	}
}

// FuzzFieldSection decodes arbitrary bytes: no panic; a section that
// decodes is decoded alike by quic-go's decoder and survives encoding
// again.
func FuzzFieldSection(f *testing.F) {
	f.Add(encodeSection(sampleFields))
	f.Add(encodeSection(qpackStatic[:]))
	f.Add([]byte{0, 0, 0x51, 0x05, 'a', 'b', 'c', 'd', 'e'})
	f.Add([]byte{0, 0, 0x23, 'a', 'b', 'c', 0x01, 'x'})
	f.Add([]byte{0x01, 0x00, 0x80})
	f.Fuzz(func(t *testing.T, p []byte) {
		got, err := decodeLines(p)
		if err != nil {
			return
		}
		if theirs, err := decodeWithQuicGo(p); err == nil && !slices.Equal(got, theirs) {
			t.Fatalf("decoded %q, quic-go %q", got, theirs)
		}
		again, err := decodeLines(encodeSection(got))
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("re-encoded %q decoded as %q, %v", got, again, err)
		}
	})
}

// BenchmarkFieldSection encodes and decodes a response's usual field
// section.
func BenchmarkFieldSection(b *testing.B) {
	fields := []headerField{
		{":status", "200"}, {"content-type", "application/octet-stream"},
		{"content-length", "1024"}, {"date", "Sat, 28 Nov 2026 04:58:00 GMT"},
	}
	b.ReportAllocs()
	var buf []byte
	var room [maxFieldsOnStack]headerField
	for b.Loop() {
		buf = appendFieldSectionPrefix(buf[:0])
		for _, f := range fields {
			buf = appendFieldLine(buf, f.Name, f.Value)
		}
		if _, err := appendFieldSection(room[:0], buf, 1<<16); err != nil {
			b.Fatal(err)
		}
	}
}
