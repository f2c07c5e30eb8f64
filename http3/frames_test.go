package http3

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/satquic/satquic/internal/testkit"
)

func reader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }

// wantCode checks that err is an *Error of this endpoint with code.
func wantCode(t *testing.T, err error, code ErrCode, conn bool) {
	t.Helper()
	e, ok := asH3(err)
	if !ok || e.Code != code || e.Connection != conn || e.Remote {
		t.Fatalf("error %v, want %s (connection %v)", err, code, conn)
	}
}

func TestVarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 63, 64, 16383, 16384, 1<<30 - 1, 1 << 30, maxVarint} {
		b := appendVarint(nil, v)
		if len(b) != varintLen(v) {
			t.Fatalf("%d: %d bytes, varintLen %d", v, len(b), varintLen(v))
		}
		got, n := parseVarint(b)
		if got != v || n != len(b) {
			t.Fatalf("%d: parsed %d, %d bytes", v, got, n)
		}
		r, err := readVarint(reader(b))
		if r != v || err != nil {
			t.Fatalf("%d: read %d, %v", v, r, err)
		}
		for i := 1; i < len(b); i++ {
			if _, n := parseVarint(b[:i]); n != 0 {
				t.Fatalf("%d: prefix of %d bytes parsed", v, i)
			}
			if _, err := readVarint(reader(b[:i])); !errors.Is(err, errTruncated) {
				t.Fatalf("%d: prefix of %d bytes: %v", v, i, err)
			}
		}
	}
	if _, err := readVarint(reader(nil)); err != io.EOF {
		t.Fatalf("empty: %v", err)
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	in := settings{
		maxFieldSectionSize: 12345, hasMaxFieldSectionSize: true,
		qpackMaxTableCapacity: 4096, qpackBlockedStreams: 16,
		enableConnectProtocol: true, h3Datagram: true, grease: greaseID(7),
	}
	b := appendSettingsFrame(nil, in)
	f, err := readControlFrame(reader(b), true)
	if err != nil {
		t.Fatal(err)
	}
	out := f.settings
	out.grease = in.grease // ignored on receipt, as any unknown setting
	if out != in {
		t.Fatalf("got %+v, want %+v", out, in)
	}
	// A zero field section size is a limit, not its absence.
	f, err = readControlFrame(reader(appendSettingsFrame(nil, settings{hasMaxFieldSectionSize: true})), true)
	if err != nil || !f.settings.hasMaxFieldSectionSize || f.settings.maxFieldSectionSize != 0 {
		t.Fatalf("zero limit: %+v %v", f.settings, err)
	}
}

func settingsPayload(pairs ...uint64) []byte {
	var p []byte
	for _, v := range pairs {
		p = appendVarint(p, v)
	}
	return p
}

func TestSettingsErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		payload []byte
		code    ErrCode
	}{
		{"duplicate", settingsPayload(6, 100, 6, 100), ErrCodeSettingsError},
		{"duplicate unknown", settingsPayload(0x21, 1, 0x21, 2), ErrCodeSettingsError},
		{"HTTP/2 ENABLE_PUSH", settingsPayload(2, 0), ErrCodeSettingsError},
		{"HTTP/2 MAX_FRAME_SIZE", settingsPayload(5, 16384), ErrCodeSettingsError},
		{"CONNECT protocol 2", settingsPayload(8, 2), ErrCodeSettingsError},
		{"datagram 5", settingsPayload(0x33, 5), ErrCodeSettingsError},
		{"identifier without value", settingsPayload(6), ErrCodeFrameError},
		{"truncated value", append(settingsPayload(6), 0x80, 1), ErrCodeFrameError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseSettings(tc.payload)
			wantCode(t, err, tc.code, true)
		})
	}
	s, err := parseSettings(settingsPayload(0x21, 7, 0x1234, 9, 6, 77))
	if err != nil || s.maxFieldSectionSize != 77 {
		t.Fatalf("unknown settings: %+v %v", s, err)
	}
}

func frameBytes(typ uint64, payload []byte) []byte {
	return append(appendFrameHeader(nil, typ, uint64(len(payload))), payload...)
}

func TestControlFrames(t *testing.T) {
	settingsFrame := appendSettingsFrame(nil, settings{maxFieldSectionSize: 1000, hasMaxFieldSectionSize: true})
	for _, tc := range []struct {
		name  string
		in    []byte
		first bool
		code  ErrCode
	}{
		{"GOAWAY first", appendIDFrame(nil, frameGoAway, 4), true, ErrCodeMissingSettings},
		{"unknown first", frameBytes(0x21, nil), true, ErrCodeMissingSettings},
		{"HEADERS first", frameBytes(frameHeaders, []byte{0, 0}), true, ErrCodeMissingSettings},
		{"HEADERS", frameBytes(frameHeaders, []byte{0, 0}), false, ErrCodeFrameUnexpected},
		{"DATA", frameBytes(frameData, []byte("x")), false, ErrCodeFrameUnexpected},
		{"PUSH_PROMISE", frameBytes(framePushPromise, []byte{0}), false, ErrCodeFrameUnexpected},
		{"HTTP/2 PRIORITY", frameBytes(0x02, nil), false, ErrCodeFrameUnexpected},
		{"HTTP/2 WINDOW_UPDATE", frameBytes(0x08, nil), false, ErrCodeFrameUnexpected},
		{"huge SETTINGS", appendFrameHeader(nil, frameSettings, 1<<40), true, ErrCodeExcessiveLoad},
		{"GOAWAY two varints", frameBytes(frameGoAway, []byte{1, 2}), false, ErrCodeFrameError},
		{"GOAWAY empty", frameBytes(frameGoAway, nil), false, ErrCodeFrameError},
		{"GOAWAY too long", frameBytes(frameGoAway, make([]byte, 9)), false, ErrCodeFrameError},
		{"MAX_PUSH_ID short", frameBytes(frameMaxPushID, []byte{0x40}), false, ErrCodeFrameError},
		{"truncated SETTINGS", settingsFrame[:len(settingsFrame)-1], true, ErrCodeFrameError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readControlFrame(reader(tc.in), tc.first)
			wantCode(t, err, tc.code, true)
		})
	}

	// A valid sequence: SETTINGS, an unknown frame (skipped), GOAWAY,
	// MAX_PUSH_ID, then the end of the stream.
	var in []byte
	in = append(in, settingsFrame...)
	in = append(in, frameBytes(greaseID(3), bytes.Repeat([]byte{7}, 5000))...)
	in = appendIDFrame(in, frameGoAway, 1<<20)
	in = appendIDFrame(in, frameMaxPushID, 9)
	r := reader(in)
	var types []uint64
	var ids []uint64
	for first := true; ; first = false {
		f, err := readControlFrame(r, first)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, f.typ)
		ids = append(ids, f.id)
	}
	if len(types) != 4 || types[0] != frameSettings || types[1] != greaseID(3) || types[2] != frameGoAway ||
		ids[2] != 1<<20 || types[3] != frameMaxPushID || ids[3] != 9 {
		t.Fatalf("types %v ids %v", types, ids)
	}
	// Every proper prefix that cuts a frame is an H3_FRAME_ERROR, never
	// a panic or a clean end.
	for i := 1; i < len(in); i++ {
		r := reader(in[:i])
		var err error
		for first := true; err == nil; first = false {
			_, err = readControlFrame(r, first)
		}
		if err == io.EOF {
			continue // the cut fell between frames
		}
		wantCode(t, err, ErrCodeFrameError, true)
	}
}

func TestRequestFrames(t *testing.T) {
	var in []byte
	in = append(in, frameBytes(0x21, []byte("ignored"))...)
	in = append(in, frameBytes(frameHeaders, []byte{0, 0, 0xd1})...)
	in = append(in, appendFrameHeader(nil, frameData, 3)...)
	in = append(in, "abc"...)
	r := reader(in)
	f, err := readRequestFrame(r, 100)
	if err != nil || f.typ != frameHeaders || !bytes.Equal(f.payload, []byte{0, 0, 0xd1}) {
		t.Fatalf("%+v %v", f, err)
	}
	f, err = readRequestFrame(r, 100)
	if err != nil || f.typ != frameData || f.length != 3 {
		t.Fatalf("%+v %v", f, err)
	}
	if _, err := readRequestFrame(reader(frameBytes(frameHeaders, make([]byte, 101))), 100); err != errFieldSectionTooLarge {
		t.Fatalf("large HEADERS: %v", err)
	}
	for _, typ := range []uint64{frameSettings, frameGoAway, frameCancelPush, frameMaxPushID, 0x02, 0x06, 0x08, 0x09} {
		_, err := readRequestFrame(reader(frameBytes(typ, []byte{0})), 100)
		wantCode(t, err, ErrCodeFrameUnexpected, true)
	}
	_, err = readRequestFrame(reader(frameBytes(frameHeaders, []byte{0, 0, 0xd1})[:4]), 100)
	wantCode(t, err, ErrCodeFrameError, true)

	// Payloads beyond one allocation chunk grow as they arrive.
	big := testkit.Payload(5*payloadChunk+123, 4)
	f, err = readRequestFrame(reader(frameBytes(frameHeaders, big)), 1<<20)
	if err != nil || !bytes.Equal(f.payload, big) {
		t.Fatalf("large payload: %d bytes, %v", len(f.payload), err)
	}
	_, err = readRequestFrame(reader(append(appendFrameHeader(nil, frameHeaders, 1<<20), big...)), 1<<20)
	wantCode(t, err, ErrCodeFrameError, true)
}

func encodeFields(fields ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		_ = enc.WriteField(qpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return buf.Bytes()
}

func TestFieldSections(t *testing.T) {
	ok := encodeFields(":method", "GET", ":scheme", "https", ":authority", "example.com", ":path", "/a?b",
		"cookie", "a=1", "cookie", "b=2", "accept", "*/*")
	fields, err := decodeFieldSection(ok, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var rf requestFields
	if err := parseRequestFields(fields, &rf); err != nil {
		t.Fatal(err)
	}
	req := new(http.Request)
	err = newServerRequest(req, &rf, context.Background)
	if err != nil || req.Host != "example.com" || req.URL.Path != "/a" || req.URL.RawQuery != "b" ||
		req.Header.Get("Cookie") != "a=1; b=2" || req.ContentLength != -1 {
		t.Fatalf("%+v %v", req, err)
	}
	if _, err := decodeFieldSection(ok, 100); err != errFieldSectionTooLarge {
		t.Fatalf("limit: %v", err)
	}

	// References to a dynamic table this endpoint never offered.
	for _, p := range [][]byte{{0x01, 0x00, 0x80}, {0x00, 0x00, 0x80}, {0x00, 0x00, 0x40, 0x00}} {
		_, err := decodeFieldSection(p, 1000)
		wantCode(t, err, ErrCodeQPACKDecompressionFailed, true)
	}

	for _, tc := range []struct {
		name   string
		fields []string
	}{
		{"uppercase", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "X-Up", "1"}},
		{"no method", []string{":scheme", "https", ":authority", "a", ":path", "/"}},
		{"no path", []string{":method", "GET", ":scheme", "https", ":authority", "a"}},
		{"empty path", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", ""}},
		{"no authority", []string{":method", "GET", ":scheme", "https", ":path", "/"}},
		{"pseudo after regular", []string{":method", "GET", "accept", "*/*", ":scheme", "https", ":authority", "a", ":path", "/"}},
		{"unknown pseudo", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", ":status", "200"}},
		{"repeated pseudo", []string{":method", "GET", ":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/"}},
		{"connection header", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "connection", "close"}},
		{"te gzip", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "te", "gzip"}},
		{"CR in value", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "x", "a\rb"}},
		{"host differs", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "host", "b"}},
		{"bad content-length", []string{":method", "GET", ":scheme", "https", ":authority", "a", ":path", "/", "content-length", "-1"}},
		{"CONNECT with path", []string{":method", "CONNECT", ":authority", "a:443", ":path", "/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fields, err := decodeFieldSection(encodeFields(tc.fields...), 10000)
			if err == nil {
				err = parseRequestFields(fields, new(requestFields))
			}
			wantCode(t, err, ErrCodeMessageError, false)
		})
	}

	for _, tc := range []struct {
		fields []string
		ok     bool
	}{
		{[]string{":status", "200", "content-type", "text/plain"}, true},
		{[]string{":status", "20"}, false},
		{[]string{":status", "600"}, false},
		{[]string{"content-type", "text/plain"}, false},
		{[]string{":status", "200", ":status", "200"}, false},
		{[]string{":status", "200", ":path", "/"}, false},
	} {
		fields, err := decodeFieldSection(encodeFields(tc.fields...), 10000)
		if err == nil {
			_, _, err = parseResponseFields(fields)
		}
		if (err == nil) != tc.ok {
			t.Errorf("%v: %v", tc.fields, err)
		}
	}
	fields, _ = decodeFieldSection(encodeFields(":path", "/"), 100)
	if _, err := parseTrailerFields(fields); err == nil || !strings.Contains(err.Error(), "trailers") {
		t.Errorf("pseudo-header in trailers: %v", err)
	}
}

func TestErrCodeString(t *testing.T) {
	if ErrCodeFrameUnexpected.String() != "H3_FRAME_UNEXPECTED" || ErrCodeQPACKDecoderStreamError.String() != "QPACK_DECODER_STREAM_ERROR" {
		t.Fatal("names")
	}
	if s := ErrCode(0x21).String(); !strings.Contains(s, "0x21") {
		t.Fatal(s)
	}
}
