package connectip

import (
	"errors"
	"testing"
)

// Truncated inputs of the parsers the codec tests leave out: every proper
// prefix is a clear ErrMalformed unless it is itself a whole message.

// TestAddressRequestTruncated: a prefix of an ADDRESS_REQUEST payload
// (RFC 9484 section 4.7.1) parses only where a whole entry ends.
func TestAddressRequestTruncated(t *testing.T) {
	b, err := AppendAddressRequest(nil, []RequestedAddress{
		{RequestID: 1, Prefix: mustPrefix("0.0.0.0/32")},
		{RequestID: 300, Prefix: mustPrefix("2001:db8::/64")},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := ParseCapsule(b)
	if err != nil {
		t.Fatal(err)
	}
	// Request ID 1 (1 byte), version, 4 address bytes, prefix length;
	// then request ID 300 (2 bytes), version, 16 bytes, prefix length.
	firstEnd := 1 + 1 + 4 + 1
	if len(c.Payload) != firstEnd+2+1+16+1 {
		t.Fatalf("payload of %d bytes", len(c.Payload))
	}
	for i := range len(c.Payload) {
		reqs, err := ParseAddressRequest(c.Payload[:i])
		if i == firstEnd {
			if err != nil || len(reqs) != 1 {
				t.Fatalf("the first entry alone: %v, %v", reqs, err)
			}
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix of %d bytes: %v, want ErrMalformed", i, err)
		}
	}
}

// TestDatagramTruncated: an HTTP datagram payload cut inside its
// Context ID (RFC 9484 section 6) is malformed; cut after it, it parses
// with what is left of the packet.
func TestDatagramTruncated(t *testing.T) {
	packet := testPacket(t, "192.0.2.1", "198.51.100.7", 17, 40, 64)
	const idLen = 8 // a Context ID of 2^40 takes an 8-byte varint
	b := AppendDatagram(nil, 1<<40, packet)
	if len(b) != idLen+len(packet) {
		t.Fatalf("datagram of %d bytes", len(b))
	}
	for i := range len(b) {
		id, p, err := ParseDatagram(b[:i])
		if i < idLen {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("prefix of %d bytes: %v, want ErrMalformed", i, err)
			}
			continue
		}
		if err != nil || id != 1<<40 || len(p) != i-idLen {
			t.Fatalf("prefix of %d bytes: %d, %d bytes, %v", i, id, len(p), err)
		}
	}
}

// TestIPv6ExtensionHeadersTruncated: an IPv6 packet cut anywhere in or
// after its extension headers (RFC 8200 section 4) is malformed: its
// Payload Length no longer matches, or a header runs past the end.
func TestIPv6ExtensionHeadersTruncated(t *testing.T) {
	ext := []byte{extDestOptions, 0, 1, 4, 0, 0, 0, 0, extRouting, 0, 0, 0, 0, 0, 0, 0, 17, 0, 0, 0, 0, 0, 0, 0}
	p := testPacket(t, "2001:db8::1", "2001:db8::2", extHopByHop, ipv6HeaderLen+len(ext)+8, 64)
	copy(p[ipv6HeaderLen:], ext)
	h, err := ParseIPHeader(p)
	if err != nil || h.Protocol != 17 || h.PayloadOffset != ipv6HeaderLen+len(ext) {
		t.Fatalf("whole packet: %+v, %v", h, err)
	}
	for i := range len(p) {
		if _, err := ParseIPHeader(p[:i]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("prefix of %d bytes: %v, want ErrMalformed", i, err)
		}
	}
}
