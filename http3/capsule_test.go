package http3

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/iotest"
)

func TestCapsuleRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	big := bytes.Repeat([]byte{0xab}, DefaultMaxCapsuleSize)
	caps := []struct {
		typ CapsuleType
		p   []byte
	}{
		{CapsuleTypeDatagram, []byte("an IP packet")},
		{0x01, nil},
		{1 << 40, []byte{1, 2, 3}},
		{0x02, big},
	}
	for _, c := range caps {
		if err := WriteCapsule(&buf, c.typ, c.p); err != nil {
			t.Fatal(err)
		}
	}
	// A reader without ReadByte, one byte a read, sees the same.
	for _, r := range []io.Reader{bytes.NewReader(buf.Bytes()), iotest.OneByteReader(bytes.NewReader(buf.Bytes()))} {
		for _, c := range caps {
			typ, p, err := ReadCapsule(r, 0)
			if err != nil || typ != c.typ || !bytes.Equal(p, c.p) {
				t.Fatalf("capsule %#x: got %#x, %d bytes, %v", c.typ, typ, len(p), err)
			}
		}
		if _, _, err := ReadCapsule(r, 0); err != io.EOF {
			t.Errorf("after the last capsule: %v, want io.EOF", err)
		}
	}
}

// TestCapsuleTooLarge: a capsule above the limit is read past without
// being buffered, and the next one is read whole.
func TestCapsuleTooLarge(t *testing.T) {
	b := AppendCapsule(nil, 0x1f, make([]byte, 5000))
	b = AppendCapsule(b, 0x00, []byte("next"))
	r := bytes.NewReader(b)
	_, _, err := ReadCapsule(r, 4096)
	var tl *CapsuleTooLargeError
	if !errors.As(err, &tl) || tl.Type != 0x1f || tl.Length != 5000 || tl.Limit != 4096 {
		t.Fatalf("large capsule: %v", err)
	}
	typ, p, err := ReadCapsule(r, 4096)
	if err != nil || typ != 0 || string(p) != "next" {
		t.Fatalf("next capsule: %#x %q %v", typ, p, err)
	}
	// A huge announced length costs no memory before the data comes:
	// the payload is cut short here.
	huge := append(appendVarint(appendVarint(nil, 0), 1<<30), 1, 2, 3)
	if _, _, err := ReadCapsule(bytes.NewReader(huge), 1<<31); err != io.ErrUnexpectedEOF {
		t.Errorf("a 1 GiB capsule with 3 bytes: %v", err)
	}
}

// TestCapsuleTruncated: every proper prefix of a capsule is an
// io.ErrUnexpectedEOF, except the empty one, io.EOF.
func TestCapsuleTruncated(t *testing.T) {
	whole := AppendCapsule(nil, 0x4000, bytes.Repeat([]byte{5}, 300))
	for n := range len(whole) {
		_, _, err := ReadCapsule(bytes.NewReader(whole[:n]), 0)
		want := io.ErrUnexpectedEOF
		if n == 0 {
			want = io.EOF
		}
		if err != want {
			t.Fatalf("prefix of %d bytes: %v, want %v", n, err, want)
		}
	}
}

// FuzzReadCapsule: a capsule stream of any bytes reads as capsules that
// encode back to the same bytes, then an end or an error; never a panic
// nor a payload above the limit.
func FuzzReadCapsule(f *testing.F) {
	f.Add(AppendCapsule(AppendCapsule(nil, 0, []byte("dgram")), 0x2, []byte{1, 2}))
	f.Add(AppendCapsule(nil, 0x99, make([]byte, 300)))
	f.Add([]byte{0x00, 0x40})
	f.Add([]byte{0xc0, 0, 0, 0, 0, 0, 0, 1, 0x80, 0, 0x10, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var again []byte
		for {
			typ, p, err := ReadCapsule(r, 256)
			var tl *CapsuleTooLargeError
			switch {
			case err == io.EOF:
				if !bytes.Equal(again, data) && canonicalCapsules(data) {
					t.Fatalf("capsules %x encode back to %x", data, again)
				}
				return
			case errors.As(err, &tl):
				if tl.Length <= 256 {
					t.Fatalf("capsule of %d bytes reported too large", tl.Length)
				}
				// Compare what follows the skipped capsule.
				data = data[len(data)-r.Len():]
				again = nil
				continue
			case err != nil:
				if err != io.ErrUnexpectedEOF {
					t.Fatalf("error %v", err)
				}
				return
			}
			if len(p) > 256 {
				t.Fatalf("payload of %d bytes above the limit", len(p))
			}
			again = AppendCapsule(again, typ, p)
		}
	})
}

// canonicalCapsules reports whether data's varints are in their
// shortest form, as AppendCapsule writes them, so that a round trip
// must give data back.
func canonicalCapsules(data []byte) bool {
	for len(data) > 0 {
		typ, n := parseVarint(data)
		if n == 0 || n != varintLen(typ) {
			return false
		}
		data = data[n:]
		l, n := parseVarint(data)
		if n == 0 || n != varintLen(l) || uint64(len(data)-n) < l {
			return false
		}
		data = data[n+int(l):]
	}
	return true
}

func TestCapsuleProtocolHeader(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{[]string{"?1"}, true},
		{[]string{" ?1 "}, true},
		{[]string{"?1;a=b"}, true},
		{[]string{"?0"}, false},
		{[]string{"1"}, false},
		{[]string{"true"}, false},
		{[]string{"?1", "?1"}, false},
		{nil, false},
	} {
		h := http.Header{}
		for _, v := range tc.values {
			h.Add(CapsuleProtocolHeader, v)
		}
		if got := CapsuleProtocol(h); got != tc.want {
			t.Errorf("%q: %v, want %v", tc.values, got, tc.want)
		}
	}
}
