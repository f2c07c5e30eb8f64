package wire

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"testing"
)

func ptr[T any](v T) *T { return &v }

func serverParams(t testing.TB) TransportParameters {
	p := DefaultTransportParameters()
	p.OriginalDestinationConnectionID = ptr(mustConnID(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}))
	p.MaxIdleTimeoutMs = 30000
	p.StatelessResetToken = &StatelessResetToken{0xa, 0xb}
	p.MaxUDPPayloadSize = 1500
	p.InitialMaxData = 15 << 20
	p.InitialMaxStreamDataBidiLocal = 6 << 20
	p.InitialMaxStreamDataBidiRemote = 6<<20 + 1
	p.InitialMaxStreamDataUni = MaxVarint
	p.InitialMaxStreamsBidi = MaxStreamsLimit
	p.InitialMaxStreamsUni = 3
	p.AckDelayExponent = MaxAckDelayExponent
	p.MaxAckDelayMs = MaxMaxAckDelayMs
	p.DisableActiveMigration = true
	p.PreferredAddress = &PreferredAddress{
		IPv4:                netip.MustParseAddrPort("192.0.2.1:443"),
		IPv6:                netip.MustParseAddrPort("[2001:db8::1]:4433"),
		ConnectionID:        mustConnID(t, bytes.Repeat([]byte{9}, 20)),
		StatelessResetToken: StatelessResetToken{1},
	}
	p.ActiveConnectionIDLimit = 8
	p.InitialSourceConnectionID = ptr(mustConnID(t, []byte{0xcc}))
	p.RetrySourceConnectionID = ptr(mustConnID(t, nil))
	p.VersionInformation = &VersionInformation{Chosen: Version1, Available: []Version{Version2, Version1}}
	p.MaxDatagramFrameSize = 65535
	p.Extensions = map[uint64][]byte{0x32a80fec: {1, 2, 3}, 0x40: {}}
	return p
}

func clientParams(t testing.TB) TransportParameters {
	p := DefaultTransportParameters()
	p.InitialSourceConnectionID = ptr(mustConnID(t, nil))
	p.InitialMaxData = 1 << 20
	p.VersionInformation = &VersionInformation{Chosen: Version2, Available: []Version{Version2, Version1}}
	return p
}

func TestTransportParametersRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		sender Perspective
		p      TransportParameters
	}{
		{PerspectiveServer, serverParams(t)},
		{PerspectiveClient, clientParams(t)},
		{PerspectiveClient, func() TransportParameters {
			p := DefaultTransportParameters()
			p.InitialSourceConnectionID = ptr(mustConnID(t, []byte{1}))
			return p
		}()},
	} {
		b, err := tc.p.Append(nil, tc.sender)
		if err != nil {
			t.Fatalf("%v: %v", tc.sender, err)
		}
		got, err := ParseTransportParameters(b, tc.sender)
		if err != nil {
			t.Fatalf("%v: %v", tc.sender, err)
		}
		if !reflect.DeepEqual(got, tc.p) {
			t.Errorf("%v round trip:\n got %+v\nwant %+v", tc.sender, got, tc.p)
		}
	}
}

// The exact encoding of a small parameter set: defaults are left out.
func TestTransportParametersEncoding(t *testing.T) {
	p := DefaultTransportParameters()
	p.InitialSourceConnectionID = ptr(mustConnID(t, []byte{0xab, 0xcd}))
	p.InitialMaxData = 16384
	p.MaxDatagramFrameSize = 1200
	b, err := p.Append(nil, PerspectiveClient)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0x04, 0x04, 0x80, 0x00, 0x40, 0x00, // initial_max_data 16384
		0x0f, 0x02, 0xab, 0xcd, // initial_source_connection_id
		0x20, 0x02, 0x44, 0xb0, // max_datagram_frame_size 1200
	}
	if !bytes.Equal(b, want) {
		t.Errorf("encoding %x, want %x", b, want)
	}
	if p.MaxAckDelay().Milliseconds() != 25 || p.MaxIdleTimeout() != 0 {
		t.Error("duration accessors")
	}
}

// Unknown parameters are kept, reserved ones skipped, and values may use
// non-minimal varints.
func TestTransportParametersUnknownAndGrease(t *testing.T) {
	b := []byte{
		0x0f, 0x00, // initial_source_connection_id, empty
		27, 0x03, 1, 2, 3, // reserved 31*0+27
		0x40, 0x3a, 0x01, 0xff, // reserved 58 on two bytes
		0x52, 0x34, 0x02, 0xaa, 0xbb, // unknown 0x1234
		0x01, 0x02, 0x40, 0x05, // max_idle_timeout 5 on two bytes
	}
	p, err := ParseTransportParameters(b, PerspectiveClient)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Extensions) != 1 || !bytes.Equal(p.Extensions[0x1234], []byte{0xaa, 0xbb}) || p.MaxIdleTimeoutMs != 5 {
		t.Errorf("parsed %+v", p)
	}
	b[len(b)-6] = 0xcc
	if p.Extensions[0x1234][0] != 0xaa {
		t.Error("extension value aliases the input")
	}
}

func TestTransportParametersErrors(t *testing.T) {
	isid := []byte{0x0f, 0x00}
	odcid := []byte{0x00, 0x01, 0x07}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	prefAddr := func(cidLen byte) []byte {
		v := append(make([]byte, 24), cidLen)
		v = append(v, bytes.Repeat([]byte{1}, int(cidLen))...)
		v = append(v, make([]byte, 16)...)
		return append([]byte{0x0d, byte(len(v))}, v...)
	}
	for _, tc := range []struct {
		name   string
		sender Perspective
		b      []byte
	}{
		{"missing initial_source_connection_id", PerspectiveClient, nil},
		{"server without original_destination_connection_id", PerspectiveServer, isid},
		{"client sends original_destination_connection_id", PerspectiveClient, cat(isid, odcid)},
		{"client sends stateless_reset_token", PerspectiveClient, cat(isid, []byte{0x02, 16}, make([]byte, 16))},
		{"client sends retry_source_connection_id", PerspectiveClient, cat(isid, []byte{0x10, 0})},
		{"client sends preferred_address", PerspectiveClient, cat(isid, prefAddr(4))},
		{"duplicate parameter", PerspectiveClient, cat(isid, []byte{0x01, 1, 5, 0x01, 1, 5})},
		{"duplicate unknown parameter", PerspectiveClient, cat(isid, []byte{0x30, 0, 0x30, 0})},
		{"duplicate reserved parameter", PerspectiveClient, cat(isid, []byte{27, 0, 27, 0})},
		{"max_udp_payload_size 1199", PerspectiveClient, cat(isid, []byte{0x03, 2, 0x44, 0xaf})},
		{"ack_delay_exponent 21", PerspectiveClient, cat(isid, []byte{0x0a, 1, 21})},
		{"max_ack_delay 2^14", PerspectiveClient, cat(isid, []byte{0x0b, 4, 0x80, 0, 0x40, 0})},
		{"active_connection_id_limit 1", PerspectiveClient, cat(isid, []byte{0x0e, 1, 1})},
		{"initial_max_streams_bidi above 2^60", PerspectiveClient, cat(isid, []byte{0x08, 8, 0xd0, 0, 0, 0, 0, 0, 0, 1})},
		{"integer with trailing byte", PerspectiveClient, cat(isid, []byte{0x04, 2, 5, 0})},
		{"integer cut short", PerspectiveClient, cat(isid, []byte{0x04, 1, 0x40})},
		{"stateless_reset_token of 15 bytes", PerspectiveServer, cat(isid, odcid, []byte{0x02, 15}, make([]byte, 15))},
		{"disable_active_migration with value", PerspectiveClient, cat(isid, []byte{0x0c, 1, 0})},
		{"connection ID of 21 bytes", PerspectiveClient, cat([]byte{0x0f, 21}, make([]byte, 21))},
		{"preferred_address with empty connection ID", PerspectiveServer, cat([]byte{0x0f, 1, 1}, odcid, prefAddr(0))},
		{"preferred_address with 21-byte connection ID", PerspectiveServer, cat([]byte{0x0f, 1, 1}, odcid, prefAddr(21))},
		{"preferred_address from zero-length server ID", PerspectiveServer, cat(isid, odcid, prefAddr(4))},
		{"version_information of 6 bytes", PerspectiveServer, cat(isid, odcid, []byte{0x11, 6, 0, 0, 0, 1, 0, 0})},
		{"version_information empty", PerspectiveServer, cat(isid, odcid, []byte{0x11, 0})},
		{"version_information chooses 0", PerspectiveServer, cat(isid, odcid, []byte{0x11, 4, 0, 0, 0, 0})},
		{"version_information lists 0", PerspectiveServer, cat(isid, odcid, []byte{0x11, 8, 0, 0, 0, 1, 0, 0, 0, 0})},
		{"client version_information omits chosen", PerspectiveClient, cat(isid, []byte{0x11, 8, 0, 0, 0, 1, 0x6b, 0x33, 0x43, 0xcf})},
		{"truncated value", PerspectiveClient, cat(isid, []byte{0x40, 5, 1})},
		{"unknown sender", 0, isid},
	} {
		_, err := ParseTransportParameters(tc.b, tc.sender)
		var te *TransportError
		if !errors.As(err, &te) || te.Code != CodeTransportParameterError {
			t.Errorf("%s: err %v, want TRANSPORT_PARAMETER_ERROR", tc.name, err)
		}
	}
}

func TestTransportParametersAppendRejects(t *testing.T) {
	for name, mutate := range map[string]func(p *TransportParameters){
		"payload size": func(p *TransportParameters) { p.MaxUDPPayloadSize = 1000 },
		"zero value struct": func(p *TransportParameters) {
			*p = TransportParameters{InitialSourceConnectionID: p.InitialSourceConnectionID}
		},
		"integer too large":   func(p *TransportParameters) { p.InitialMaxData = MaxVarint + 1 },
		"extension shadows":   func(p *TransportParameters) { p.Extensions = map[uint64][]byte{0x01: {5}} },
		"extension ID range":  func(p *TransportParameters) { p.Extensions = map[uint64][]byte{MaxVarint + 1: nil} },
		"server-only param":   func(p *TransportParameters) { p.StatelessResetToken = &StatelessResetToken{} },
		"version information": func(p *TransportParameters) { p.VersionInformation = &VersionInformation{Chosen: 0} },
	} {
		p := clientParams(t)
		mutate(&p)
		if b, err := p.Append([]byte{1}, PerspectiveClient); err == nil || len(b) != 1 {
			t.Errorf("%s: Append = %x, %v; want an error and no bytes", name, b, err)
		}
	}
	for name, addr := range map[string]PreferredAddress{
		"IPv6 in IPv4 field":  {IPv4: netip.MustParseAddrPort("[::1]:1")},
		"zoned IPv6 address":  {IPv6: netip.MustParseAddrPort("[fe80::1%eth0]:1")},
		"empty connection ID": {},
	} {
		p := serverParams(t)
		addr.ConnectionID = p.PreferredAddress.ConnectionID
		if name == "empty connection ID" {
			addr.ConnectionID = ConnectionID{}
		}
		p.PreferredAddress = &addr
		if _, err := p.Append(nil, PerspectiveServer); err == nil {
			t.Errorf("%s: Append accepted %+v", name, addr)
		}
	}
}

// Every prefix that cuts a parameter in the middle is an error; a prefix
// that ends between parameters is a shorter, valid list only if it still
// holds the required ones.
func TestTransportParametersTruncatedPrefixes(t *testing.T) {
	p := serverParams(t)
	b, err := p.Append(nil, PerspectiveServer)
	if err != nil {
		t.Fatal(err)
	}
	boundaries := map[int]bool{0: true}
	for pos := 0; pos < len(b); {
		_, n1, _ := ParseVarint(b[pos:])
		l, n2, _ := ParseVarint(b[pos+n1:])
		pos += n1 + n2 + int(l)
		boundaries[pos] = true
	}
	for i := range len(b) {
		_, err := ParseTransportParameters(b[:i], PerspectiveServer)
		if !boundaries[i] && err == nil {
			t.Errorf("prefix of %d/%d bytes cuts a parameter but parsed", i, len(b))
		}
		var te *TransportError
		if err != nil && !errors.As(err, &te) {
			t.Errorf("prefix of %d bytes: error %v is not a TransportError", i, err)
		}
	}
}

func TestPreferredAddressFamilies(t *testing.T) {
	p := serverParams(t)
	p.PreferredAddress.IPv4 = netip.AddrPort{}
	b, err := p.Append(nil, PerspectiveServer)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseTransportParameters(b, PerspectiveServer)
	if err != nil || got.PreferredAddress.IPv4.IsValid() || got.PreferredAddress.IPv6 != p.PreferredAddress.IPv6 {
		t.Errorf("IPv6-only preferred address: %+v, %v", got.PreferredAddress, err)
	}
}
