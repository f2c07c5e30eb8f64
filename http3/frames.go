package http3

import (
	"bufio"
	"errors"
	"io"
)

// Frame types (RFC 9114 section 7.2 and 11.2.1).
const (
	frameData        = 0x00
	frameHeaders     = 0x01
	frameCancelPush  = 0x03
	frameSettings    = 0x04
	framePushPromise = 0x05
	frameGoAway      = 0x07
	frameMaxPushID   = 0x0d
)

// isHTTP2FrameType reports the frame types that HTTP/2 uses and HTTP/3
// reserves; receiving one is a connection error of type
// H3_FRAME_UNEXPECTED (RFC 9114 section 7.2.8).
func isHTTP2FrameType(t uint64) bool {
	return t == 0x02 || t == 0x06 || t == 0x08 || t == 0x09
}

// greaseID returns the nth of the identifiers 0x1f * N + 0x21 that frame
// types, stream types, settings and error codes reserve for greasing (RFC
// 9114 sections 7.2.8, 6.2.3, 7.2.4.1 and 8.1). A receiver needs no test
// for them: it ignores them as it ignores every unknown type or setting
// (section 9), in the default cases of the frame readers, of
// handleUniStream and of parseSettings.
func greaseID(n uint64) uint64 { return 0x1f*n + 0x21 }

// maxControlFramePayload bounds the payload of a SETTINGS frame: a
// peer's settings are a few identifiers, and a larger frame is load this
// endpoint refuses to buffer.
const maxControlFramePayload = 16 << 10

// frame is one frame header with what was read of its payload. DATA
// payloads and unknown payloads are not read by the readers below: the
// caller streams the first, the readers skip the second.
type frame struct {
	typ    uint64
	length uint64
	// payload of HEADERS (request streams), valid until the next read
	// from the stream.
	payload []byte
	// id of GOAWAY, CANCEL_PUSH and MAX_PUSH_ID.
	id uint64
	// settings of SETTINGS.
	settings settings
}

// appendFrameHeader appends a frame's type and payload length.
func appendFrameHeader(b []byte, typ, length uint64) []byte {
	return appendVarint(appendVarint(b, typ), length)
}

// appendIDFrame appends a GOAWAY, CANCEL_PUSH or MAX_PUSH_ID frame, whose
// payload is one varint.
func appendIDFrame(b []byte, typ, id uint64) []byte {
	b = appendFrameHeader(b, typ, uint64(varintLen(id)))
	return appendVarint(b, id)
}

// appendHeadersFrame appends a HEADERS frame around an encoded field
// section.
func appendHeadersFrame(b, fieldSection []byte) []byte {
	b = appendFrameHeader(b, frameHeaders, uint64(len(fieldSection)))
	return append(b, fieldSection...)
}

// readFrameHeader reads a frame's type and length: io.EOF if the stream
// ended cleanly before the frame, an H3_FRAME_ERROR if it ended inside
// the header (RFC 9114 section 7.1).
func readFrameHeader(r *bufio.Reader) (typ, length uint64, err error) {
	typ, err = readVarint(r)
	if err != nil {
		return 0, 0, frameReadError(err)
	}
	length, err = readVarint(r)
	if err == io.EOF {
		err = errTruncated
	}
	if err != nil {
		return 0, 0, frameReadError(err)
	}
	return typ, length, nil
}

// frameReadError turns a truncated frame into the connection error RFC
// 9114 section 7.1 asks for; io.EOF and the stream's own errors pass.
func frameReadError(err error) error {
	if errors.Is(err, errTruncated) || err == io.ErrUnexpectedEOF {
		return connError(ErrCodeFrameError, "truncated frame")
	}
	return err
}

// payloadChunk is how much of a payload is allocated ahead of its
// arrival: a peer that announces a large frame and sends little of it
// costs no more memory than it sent.
const payloadChunk = 16 << 10

// payloadBudget is charged the memory of a payload before it is
// allocated; an error stops the read.
type payloadBudget interface{ grow(n int) error }

// readPayload reads a payload of n bytes, which the caller bounded. A
// payload that fits r's buffer is returned in place, without a copy:
// it stays valid until the next read from r, so the caller decodes it
// first. A larger one is allocated as it arrives, in chunks that double,
// each charged to mem first unless mem is nil.
func readPayload(r *bufio.Reader, n uint64, mem payloadBudget) ([]byte, error) {
	if n <= uint64(r.Size()) {
		p, err := r.Peek(int(n))
		if err != nil {
			if err == io.EOF {
				err = errTruncated
			}
			return nil, frameReadError(err)
		}
		_, _ = r.Discard(int(n))
		return p, nil
	}
	var p []byte
	for uint64(len(p)) < n {
		if len(p) == cap(p) {
			grown, err := growPayload(p, min(n, max(2*uint64(cap(p)), payloadChunk)), mem)
			if err != nil {
				return nil, err
			}
			p = grown
		}
		m, err := io.ReadFull(r, p[len(p):min(uint64(cap(p)), n)])
		p = p[:len(p)+m]
		if err != nil {
			if err == io.EOF {
				err = errTruncated
			}
			return nil, frameReadError(err)
		}
	}
	return p, nil
}

// growPayload returns p in a buffer of capacity size, charged to mem.
func growPayload(p []byte, size uint64, mem payloadBudget) ([]byte, error) {
	if mem != nil {
		if err := mem.grow(int(size) - cap(p)); err != nil {
			return nil, err
		}
	}
	q := make([]byte, len(p), size)
	copy(q, p)
	return q, nil
}

// skipPayload discards n bytes without buffering them.
func skipPayload(r *bufio.Reader, n uint64) error {
	for n > 0 {
		chunk := n
		if chunk > 1<<30 {
			chunk = 1 << 30
		}
		d, err := r.Discard(int(chunk))
		n -= uint64(d)
		if err != nil {
			if err == io.EOF {
				err = errTruncated
			}
			return frameReadError(err)
		}
	}
	return nil
}

// parseIDPayload decodes the payload of GOAWAY, CANCEL_PUSH and
// MAX_PUSH_ID: exactly one varint (RFC 9114 section 7.1).
func parseIDPayload(typ uint64, p []byte) (uint64, error) {
	v, n := parseVarint(p)
	if n == 0 || n != len(p) {
		return 0, connError(ErrCodeFrameError, "frame type %#x: payload of %d bytes is not one varint", typ, len(p))
	}
	return v, nil
}

// readControlFrame reads the next frame of a control stream; the first
// must be SETTINGS (RFC 9114 section 6.2.1). Frames of unknown types are
// skipped and returned with their type only. Frames not allowed on a
// control stream are a connection error.
func readControlFrame(r *bufio.Reader, first bool) (frame, error) {
	typ, length, err := readFrameHeader(r)
	if err != nil {
		return frame{}, err
	}
	f := frame{typ: typ, length: length}
	switch {
	case first && typ != frameSettings:
		return f, connError(ErrCodeMissingSettings, "control stream starts with frame type %#x", typ)
	case typ == frameData || typ == frameHeaders || typ == framePushPromise || isHTTP2FrameType(typ):
		// RFC 9114 sections 7.2.1, 7.2.2, 7.2.5 and 7.2.8.
		return f, connError(ErrCodeFrameUnexpected, "frame type %#x on the control stream", typ)
	case typ == frameSettings:
		if length > maxControlFramePayload {
			return f, connError(ErrCodeExcessiveLoad, "SETTINGS frame of %d bytes", length)
		}
		p, err := readPayload(r, length, nil)
		if err != nil {
			return f, err
		}
		f.settings, err = parseSettings(p)
		return f, err
	case typ == frameGoAway || typ == frameCancelPush || typ == frameMaxPushID:
		if length == 0 || length > 8 {
			return f, connError(ErrCodeFrameError, "frame type %#x with a payload of %d bytes", typ, length)
		}
		p, err := readPayload(r, length, nil)
		if err != nil {
			return f, err
		}
		f.id, err = parseIDPayload(typ, p)
		return f, err
	default:
		// Unknown and reserved types are ignored (RFC 9114 section 9).
		return f, skipPayload(r, length)
	}
}

// errFieldSectionTooLarge: a HEADERS frame is larger than the limit the
// reader was given; its payload was left unread.
var errFieldSectionTooLarge = errors.New("http3: field section too large")

// readRequestFrame reads the next frame of a request stream, skipping
// frames of unknown types. HEADERS payloads up to maxHeaders bytes are
// read whole; a larger one gives errFieldSectionTooLarge with the frame.
// DATA and PUSH_PROMISE payloads are left for the caller. Frame types
// that never appear on a request stream are a connection error of type
// H3_FRAME_UNEXPECTED (RFC 9114 section 7.2).
func readRequestFrame(r *bufio.Reader, maxHeaders uint64) (frame, error) {
	return readRequestFrameIn(r, maxHeaders, nil)
}

// readRequestFrameIn is readRequestFrame with a HEADERS payload larger
// than r's buffer charged to mem, unless mem is nil.
func readRequestFrameIn(r *bufio.Reader, maxHeaders uint64, mem payloadBudget) (frame, error) {
	for {
		typ, length, err := readFrameHeader(r)
		if err != nil {
			return frame{}, err
		}
		f := frame{typ: typ, length: length}
		switch {
		case typ == frameData || typ == framePushPromise:
			return f, nil
		case typ == frameHeaders:
			if length > maxHeaders {
				return f, errFieldSectionTooLarge
			}
			f.payload, err = readPayload(r, length, mem)
			return f, err
		case typ == frameSettings || typ == frameGoAway || typ == frameCancelPush ||
			typ == frameMaxPushID || isHTTP2FrameType(typ):
			return f, connError(ErrCodeFrameUnexpected, "frame type %#x on a request stream", typ)
		default:
			if err := skipPayload(r, length); err != nil {
				return f, err
			}
		}
	}
}
