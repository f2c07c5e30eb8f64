package wire

import (
	"bytes"
	"testing"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{TransportErrorName(CodeFrameEncodingError), "FRAME_ENCODING_ERROR"},
		{TransportErrorName(CodeVersionNegotiationError), "VERSION_NEGOTIATION_ERROR"},
		{TransportErrorName(CryptoErrorCode(0x28)), "CRYPTO_ERROR(0x28)"},
		{TransportErrorName(0x1234), "0x1234"},
		{(&TransportError{Code: CodeTransportParameterError, Reason: "x"}).Error(), "quic: TRANSPORT_PARAMETER_ERROR: x"},
		{FrameTypeStream.String(), "STREAM"},
		{(FrameTypeStream | 7).String(), "STREAM"},
		{FrameTypeDatagramWithLen.String(), "DATAGRAM"},
		{FrameType(0x21).String(), "FrameType(0x21)"},
		{Version1.String(), "v1"},
		{Version2.String(), "v2"},
		{VersionNegotiationVersion.String(), "negotiation"},
		{Version(0x1a2a3a4a).String(), "0x1a2a3a4a"},
		{PacketType0RTT.String(), "0-RTT"},
		{PacketType(99).String(), "PacketType(99)"},
		{PerspectiveServer.String(), "server"},
		{Perspective(0).String(), "Perspective(0)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if !Version1.IsSupported() || !Version2.IsSupported() || Version(0x1a2a3a4a).IsSupported() {
		t.Error("IsSupported")
	}
}

func TestConnectionIDAccessors(t *testing.T) {
	raw := []byte{1, 2, 3}
	c := mustConnID(t, raw)
	b := c.Bytes()
	if !bytes.Equal(b, raw) || c.Len() != 3 || c.String() != "010203" {
		t.Errorf("ConnectionID accessors: %x %d %s", b, c.Len(), c)
	}
	b[0] = 9
	if c.Bytes()[0] != 1 {
		t.Error("Bytes does not copy")
	}
	if d := mustConnID(t, []byte{1, 2, 3}); d != c {
		t.Error("equal connection IDs compare unequal")
	}
}
