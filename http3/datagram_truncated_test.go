package http3

import "testing"

// TestHTTPDatagramTruncated: an HTTP datagram cut inside its Quarter
// Stream ID (RFC 9297 section 2.1) is an H3_DATAGRAM_ERROR; cut after it,
// it parses with what is left of the payload.
func TestHTTPDatagramTruncated(t *testing.T) {
	const qsid = 1 << 40 // an 8-byte varint
	const idLen = 8
	b := appendHTTPDatagram(nil, 4*qsid, []byte("an IP packet"))
	for i := range len(b) {
		got, p, err := parseHTTPDatagram(b[:i])
		if i < idLen {
			if e, ok := asH3(err); !ok || e.Code != ErrCodeDatagramError {
				t.Fatalf("prefix of %d bytes: %v, want H3_DATAGRAM_ERROR", i, err)
			}
			continue
		}
		if err != nil || got != qsid || len(p) != i-idLen {
			t.Fatalf("prefix of %d bytes: %d, %d bytes, %v", i, got, len(p), err)
		}
	}
}
