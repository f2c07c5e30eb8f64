package http3

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// CapsuleType is the type of a capsule (RFC 9297 section 3.2).
type CapsuleType uint64

// CapsuleTypeDatagram is the DATAGRAM capsule, which carries an HTTP
// datagram's payload on the stream itself where QUIC DATAGRAM frames
// cannot (RFC 9297 section 3.5); its payload is the datagram's, with no
// Quarter Stream ID.
const CapsuleTypeDatagram CapsuleType = 0x00

// DefaultMaxCapsuleSize bounds the payload ReadCapsule returns when
// given no limit: 64 KiB holds the largest HTTP datagram (a QUIC
// DATAGRAM frame fits in a UDP datagram of at most 65,527 bytes) and any
// CONNECT-IP address or route capsule with thousands of entries, and a
// peer can make a reader buffer no more than that per stream.
const DefaultMaxCapsuleSize = 64 << 10

// CapsuleProtocolHeader is the header field by which the request and
// response of an extended CONNECT agree to use the capsule protocol
// (RFC 9297 section 3.4), with the value CapsuleProtocolValue.
const (
	CapsuleProtocolHeader = "Capsule-Protocol"
	CapsuleProtocolValue  = "?1"
)

// CapsuleTooLargeError is what ReadCapsule returns for a capsule whose
// payload exceeds its limit. The payload was read and discarded, without
// being buffered, so that reading may go on with the next capsule: a
// capsule of a type the reader does not know is skipped this way (RFC
// 9297 section 3.2); one it needs makes the stream unusable.
type CapsuleTooLargeError struct {
	Type   CapsuleType
	Length uint64
	Limit  int
}

func (e *CapsuleTooLargeError) Error() string {
	return fmt.Sprintf("http3: capsule of type %#x with %d bytes, above the limit of %d", uint64(e.Type), e.Length, e.Limit)
}

// ReadCapsule reads the next capsule of a capsule stream: its type and
// its payload, of at most maxSize bytes (DefaultMaxCapsuleSize if
// maxSize <= 0). It returns io.EOF if r ended cleanly before the
// capsule, io.ErrUnexpectedEOF if r ended inside it, and a
// *CapsuleTooLargeError, after discarding the payload, if the payload is
// larger than maxSize. The payload is allocated only as it arrives.
// Callers skip capsules of types they do not know (RFC 9297 section
// 3.2).
func ReadCapsule(r io.Reader, maxSize int) (CapsuleType, []byte, error) {
	if maxSize <= 0 {
		maxSize = DefaultMaxCapsuleSize
	}
	br := byteReader(r)
	typ, err := readVarint(br)
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		return 0, nil, capsuleReadError(err)
	}
	length, err := readVarint(br)
	if err != nil {
		return 0, nil, capsuleReadError(err)
	}
	if length > uint64(maxSize) {
		if err := discard(br, length); err != nil {
			return 0, nil, err
		}
		return CapsuleType(typ), nil, &CapsuleTooLargeError{Type: CapsuleType(typ), Length: length, Limit: maxSize}
	}
	p, err := readCapsulePayload(br, int(length))
	if err != nil {
		return 0, nil, err
	}
	return CapsuleType(typ), p, nil
}

// readCapsulePayload reads n bytes, allocating at most payloadChunk
// more than what arrived.
func readCapsulePayload(r io.Reader, n int) ([]byte, error) {
	p := make([]byte, 0, min(n, payloadChunk))
	for len(p) < n {
		if len(p) == cap(p) {
			q := make([]byte, len(p), min(n, 2*cap(p)))
			copy(q, p)
			p = q
		}
		m, err := io.ReadFull(r, p[len(p):cap(p)])
		p = p[:len(p)+m]
		if err != nil {
			return nil, capsuleReadError(err)
		}
	}
	return p, nil
}

// discard reads and drops n bytes.
func discard(r io.Reader, n uint64) error {
	for n > 0 {
		chunk := min(n, 1<<30)
		m, err := io.CopyN(io.Discard, r, int64(chunk))
		n -= uint64(m)
		if err != nil {
			return capsuleReadError(err)
		}
	}
	return nil
}

// capsuleReadError: a capsule cut short is io.ErrUnexpectedEOF.
func capsuleReadError(err error) error {
	if err == errTruncated || err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// byteReader returns r as an io.ByteReader, wrapping it in a reader
// that reads one byte at a time (and so never reads beyond the capsule)
// if it is not one.
func byteReader(r io.Reader) interface {
	io.Reader
	io.ByteReader
} {
	if br, ok := r.(interface {
		io.Reader
		io.ByteReader
	}); ok {
		return br
	}
	return &oneByteReader{r: r}
}

// oneByteReader adds ReadByte to a reader without buffering ahead.
type oneByteReader struct {
	r io.Reader
	b [1]byte
}

func (o *oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func (o *oneByteReader) ReadByte() (byte, error) {
	if _, err := io.ReadFull(o.r, o.b[:]); err != nil {
		return 0, err
	}
	return o.b[0], nil
}

// AppendCapsule appends a capsule of type t with payload p.
func AppendCapsule(b []byte, t CapsuleType, p []byte) []byte {
	b = appendVarint(b, uint64(t))
	b = appendVarint(b, uint64(len(p)))
	return append(b, p...)
}

// WriteCapsule writes a capsule in one Write, which a Stream sends as
// one DATA frame.
func WriteCapsule(w io.Writer, t CapsuleType, p []byte) error {
	_, err := w.Write(AppendCapsule(make([]byte, 0, 16+len(p)), t, p))
	return err
}

// CapsuleProtocol reports whether h announces the capsule protocol: a
// Capsule-Protocol field whose value is the Structured Field Boolean
// true, "?1", with or without parameters (RFC 9297 section 3.4, RFC 8941
// sections 3.3.6 and 3.1.2). "?0", other values and no field are false.
func CapsuleProtocol(h http.Header) bool {
	vs := h.Values(CapsuleProtocolHeader)
	if len(vs) != 1 {
		return false
	}
	v := strings.Trim(vs[0], " \t")
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return v == CapsuleProtocolValue
}
