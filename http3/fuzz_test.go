package http3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

// checkParseError fails unless err is the end of the input or an HTTP/3
// error of this endpoint.
func checkParseError(t *testing.T, err error) {
	t.Helper()
	if err == io.EOF || errors.Is(err, errFieldSectionTooLarge) {
		return
	}
	if e, ok := asH3(err); !ok || e.Remote || e.Code < ErrCodeNoError {
		t.Fatalf("unexpected error %v (%T)", err, err)
	}
}

// FuzzControlStream feeds arbitrary bytes to the control stream reader:
// it must end with an error of RFC 9114's, never panic, and the frames it
// returns must encode back to frames it reads the same.
func FuzzControlStream(f *testing.F) {
	f.Add(appendSettingsFrame(nil, settings{maxFieldSectionSize: 100, hasMaxFieldSectionSize: true, grease: 0x21}))
	f.Add(append(appendSettingsFrame(nil, settings{}), appendIDFrame(nil, frameGoAway, 8)...))
	f.Add(appendIDFrame(appendSettingsFrame(nil, settings{h3Datagram: true}), frameMaxPushID, 1<<40))
	f.Add(appendSettingsFrame(nil, settings{enableConnectProtocol: true, h3Datagram: true}))
	f.Add(frameBytes(frameSettings, []byte{0x08, 0x02}))
	f.Add(frameBytes(frameSettings, []byte{0x33, 0x40, 0x01}))
	f.Add(frameBytes(frameHeaders, []byte{0, 0}))
	f.Add([]byte{0x04, 0x04, 0x06, 0x06, 0x06, 0x06})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := reader(data)
		for first := true; ; first = false {
			fr, err := readControlFrame(r, first)
			if err != nil {
				checkParseError(t, err)
				return
			}
			var again []byte
			switch fr.typ {
			case frameSettings:
				again = appendSettingsFrame(nil, fr.settings)
			case frameGoAway, frameCancelPush, frameMaxPushID:
				again = appendIDFrame(nil, fr.typ, fr.id)
			default:
				continue
			}
			back, err := readControlFrame(reader(again), fr.typ == frameSettings)
			if err != nil || back.typ != fr.typ || back.id != fr.id || back.settings != fr.settings {
				t.Fatalf("round trip of %+v: %+v, %v", fr, back, err)
			}
		}
	})
}

// FuzzRequestStream feeds arbitrary bytes to the request stream readers:
// frames, QPACK field sections, request and response checks.
func FuzzRequestStream(f *testing.F) {
	req := encodeFields(":method", "POST", ":scheme", "https", ":authority", "a", ":path", "/x", "content-length", "3")
	var in []byte
	in = append(in, frameBytes(frameHeaders, req)...)
	in = append(in, frameBytes(frameData, []byte("abc"))...)
	in = append(in, frameBytes(frameHeaders, encodeFields("x-trailer", "1"))...)
	f.Add(in)
	f.Add(frameBytes(frameHeaders, encodeFields(":status", "200")))
	f.Add(append(frameBytes(frameHeaders, encodeFields(":method", "CONNECT", ":protocol", "connect-ip",
		":scheme", "https", ":authority", "a", ":path", "/ip", "capsule-protocol", "?1")),
		frameBytes(frameData, AppendCapsule(nil, CapsuleTypeDatagram, []byte("p")))...))
	f.Add(frameBytes(frameHeaders, []byte{0, 0, 0x80}))
	f.Add(frameBytes(0x21, []byte("grease")))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := reader(data)
		for {
			fr, err := readRequestFrame(r, 4096)
			if err != nil {
				checkParseError(t, err)
				return
			}
			switch fr.typ {
			case frameData, framePushPromise:
				if err := skipPayload(r, fr.length); err != nil {
					checkParseError(t, err)
					return
				}
			case frameHeaders:
				fields, err := decodeFieldSection(fr.payload, 4096)
				if err != nil {
					checkParseError(t, err)
					continue
				}
				var rf requestFields
				if err := parseRequestFields(fields, &rf); err == nil {
					if err := newServerRequest(new(http.Request), &rf, context.Background); err != nil {
						checkParseError(t, err)
					}
				} else {
					checkParseError(t, err)
				}
				if _, _, err := parseResponseFields(fields); err != nil {
					checkParseError(t, err)
				}
				if _, err := parseTrailerFields(fields); err != nil {
					checkParseError(t, err)
				}
			}
		}
	})
}

// FuzzSettingsRoundTrip encodes settings and reads them back.
func FuzzSettingsRoundTrip(f *testing.F) {
	f.Add(uint64(100), true, uint64(0), uint64(0), false, false, uint64(3))
	f.Fuzz(func(t *testing.T, maxField uint64, hasMax bool, capacity, blocked uint64, connect, datagram bool, grease uint64) {
		in := settings{
			maxFieldSectionSize: maxField & maxVarint, hasMaxFieldSectionSize: hasMax,
			qpackMaxTableCapacity: capacity & maxVarint, qpackBlockedStreams: blocked & maxVarint,
			enableConnectProtocol: connect, h3Datagram: datagram, grease: greaseID(grease % (1 << 40)),
		}
		if !hasMax {
			in.maxFieldSectionSize = 0
		}
		fr, err := readControlFrame(reader(appendSettingsFrame(nil, in)), true)
		if err != nil {
			t.Fatal(err)
		}
		out := fr.settings
		out.grease = in.grease
		if out != in {
			t.Fatalf("got %+v, want %+v", out, in)
		}
	})
}
