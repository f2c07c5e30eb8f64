package connectip

import (
	"errors"
	"fmt"
	"io"
)

// Capsule types of RFC 9484 section 4.7 (and the DATAGRAM capsule of
// RFC 9297 section 3.5, which this package does not use and ignores).
const (
	CapsuleDatagram           uint64 = 0x00
	CapsuleAddressAssign      uint64 = 0x01
	CapsuleAddressRequest     uint64 = 0x02
	CapsuleRouteAdvertisement uint64 = 0x03
)

// MaxCapsulePayload bounds the payload of one capsule this package reads.
// RFC 9297 sets no limit; a peer could otherwise make a reader buffer up
// to 2^62 bytes. 64 KiB holds about 3,000 IPv6 addresses or routes, far
// more than a tunnel's configuration needs.
const MaxCapsulePayload = 64 << 10

// ErrCapsuleTooLarge is the error for a capsule whose declared length
// exceeds MaxCapsulePayload.
var ErrCapsuleTooLarge = errors.New("capsule larger than the limit")

// Capsule is one capsule of the Capsule Protocol (RFC 9297 section 3.2):
// a type and an opaque payload.
type Capsule struct {
	Type    uint64
	Payload []byte
}

// AppendCapsule appends a capsule of type typ carrying payload:
// Type (i), Length (i), Value (RFC 9297 section 3.2).
func AppendCapsule(b []byte, typ uint64, payload []byte) []byte {
	b = appendVarint(b, typ)
	b = appendVarint(b, uint64(len(payload)))
	return append(b, payload...)
}

// ParseCapsule reads one capsule from the start of b and returns it with
// the number of bytes it took. The payload aliases b. A capsule cut short
// gives io.ErrUnexpectedEOF, an empty b io.EOF.
func ParseCapsule(b []byte) (Capsule, int, error) {
	if len(b) == 0 {
		return Capsule{}, 0, io.EOF
	}
	typ, n1, err := parseVarint(b)
	if err != nil {
		return Capsule{}, 0, io.ErrUnexpectedEOF
	}
	length, n2, err := parseVarint(b[n1:])
	if err != nil {
		return Capsule{}, 0, io.ErrUnexpectedEOF
	}
	if length > MaxCapsulePayload {
		return Capsule{}, 0, fmt.Errorf("%w: type %#x declares %d bytes", ErrCapsuleTooLarge, typ, length)
	}
	end := n1 + n2 + int(length)
	if len(b) < end {
		return Capsule{}, 0, io.ErrUnexpectedEOF
	}
	return Capsule{Type: typ, Payload: b[n1+n2 : end]}, end, nil
}

// CapsuleReader reads capsules one by one from a capsule byte stream (the
// request stream's DATA after the response, RFC 9297 section 3.2).
type CapsuleReader struct {
	r   io.Reader
	buf []byte
}

// NewCapsuleReader returns a reader of the capsules in r.
func NewCapsuleReader(r io.Reader) *CapsuleReader { return &CapsuleReader{r: r} }

// Next returns the next capsule. Its payload is valid until the next call.
// The stream ending between capsules gives io.EOF; within one,
// io.ErrUnexpectedEOF.
func (cr *CapsuleReader) Next() (Capsule, error) {
	typ, err := cr.readVarint(true)
	if err != nil {
		return Capsule{}, err
	}
	length, err := cr.readVarint(false)
	if err != nil {
		return Capsule{}, err
	}
	if length > MaxCapsulePayload {
		return Capsule{}, fmt.Errorf("%w: type %#x declares %d bytes", ErrCapsuleTooLarge, typ, length)
	}
	if cap(cr.buf) < int(length) {
		cr.buf = make([]byte, length)
	}
	payload := cr.buf[:length]
	if _, err := io.ReadFull(cr.r, payload); err != nil {
		return Capsule{}, unexpected(err)
	}
	return Capsule{Type: typ, Payload: payload}, nil
}

// readVarint reads one variable-length integer byte by byte from the
// stream; first says whether a clean end of stream is io.EOF (before a
// capsule) rather than a truncation.
func (cr *CapsuleReader) readVarint(first bool) (uint64, error) {
	var b [8]byte
	if _, err := io.ReadFull(cr.r, b[:1]); err != nil {
		if first && errors.Is(err, io.EOF) {
			return 0, io.EOF
		}
		return 0, unexpected(err)
	}
	n := 1 << (b[0] >> 6)
	if _, err := io.ReadFull(cr.r, b[1:n]); err != nil {
		return 0, unexpected(err)
	}
	v, _, err := parseVarint(b[:n])
	return v, err
}

// unexpected turns an end of stream inside a capsule into
// io.ErrUnexpectedEOF and leaves other errors as they are.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
