package connectip

// ContextIDIP is the Context ID of HTTP Datagrams that carry a full IP
// packet (RFC 9484 section 5).
const ContextIDIP = 0

// AppendDatagram appends the HTTP Datagram payload of RFC 9484 section 6:
// Context ID (i), then payload.
func AppendDatagram(b []byte, contextID uint64, payload []byte) []byte {
	b = appendVarint(b, contextID)
	return append(b, payload...)
}

// ParseDatagram splits an HTTP Datagram payload into its Context ID and
// what follows, which may be empty (RFC 9484 section 6). The payload
// aliases b.
func ParseDatagram(b []byte) (contextID uint64, payload []byte, err error) {
	id, n, err := parseVarint(b)
	if err != nil {
		return 0, nil, malformed("HTTP datagram: context ID: %v", err)
	}
	return id, b[n:], nil
}
