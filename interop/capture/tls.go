package capture

import (
	"golang.org/x/crypto/cryptobyte"
)

// TLS handshake message types (RFC 8446 section 4) the analysis reads.
const (
	msgClientHello         = 1
	msgServerHello         = 2
	msgEncryptedExtensions = 8
	msgCertificate         = 11
)

// TLS extensions (RFC 8446 section 4.2, RFC 9001 section 8.2).
const (
	extPreSharedKey        = 41
	extEarlyData           = 42
	extTransportParameters = 0x39
)

// ClientHello is what the analysis reads of a client's first flight.
type ClientHello struct {
	Random       []byte
	CipherSuites []uint16
	// EarlyData: the client offered 0-RTT.
	EarlyData bool
}

// ServerHello is the server's answer.
type ServerHello struct {
	CipherSuite uint16
	// PreSharedKey: the server accepted a pre-shared key, so the session
	// was resumed and no certificate follows (RFC 8446 section 4.2.11).
	PreSharedKey bool
}

// handshakeMessage is one message of a handshake stream.
type handshakeMessage struct {
	typ  uint8
	body []byte
}

// splitHandshake splits the complete messages at the start of a CRYPTO
// stream; an incomplete last one is left out.
func splitHandshake(stream []byte) []handshakeMessage {
	var out []handshakeMessage
	s := cryptobyte.String(stream)
	for {
		var typ uint8
		var body cryptobyte.String
		if !s.ReadUint8(&typ) || !s.ReadUint24LengthPrefixed(&body) {
			return out
		}
		out = append(out, handshakeMessage{typ, body})
	}
}

// parseClientHello reads the fields of a ClientHello's body the checks
// need.
func parseClientHello(body []byte) (*ClientHello, bool) {
	s := cryptobyte.String(body)
	var ch ClientHello
	var random, sessionID, suites, compression, exts cryptobyte.String
	if !s.Skip(2) || !s.ReadBytes((*[]byte)(&random), 32) ||
		!s.ReadUint8LengthPrefixed(&sessionID) || !s.ReadUint16LengthPrefixed(&suites) ||
		!s.ReadUint8LengthPrefixed(&compression) || !s.ReadUint16LengthPrefixed(&exts) {
		return nil, false
	}
	ch.Random = random
	for !suites.Empty() {
		var id uint16
		if !suites.ReadUint16(&id) {
			return nil, false
		}
		ch.CipherSuites = append(ch.CipherSuites, id)
	}
	ok := eachExtension(exts, func(typ uint16, _ []byte) {
		ch.EarlyData = ch.EarlyData || typ == extEarlyData
	})
	return &ch, ok
}

// parseServerHello reads a ServerHello's body.
func parseServerHello(body []byte) (*ServerHello, bool) {
	s := cryptobyte.String(body)
	var sh ServerHello
	var sessionID, exts cryptobyte.String
	if !s.Skip(2+32) || !s.ReadUint8LengthPrefixed(&sessionID) || !s.ReadUint16(&sh.CipherSuite) ||
		!s.Skip(1) || !s.ReadUint16LengthPrefixed(&exts) {
		return nil, false
	}
	ok := eachExtension(exts, func(typ uint16, _ []byte) {
		sh.PreSharedKey = sh.PreSharedKey || typ == extPreSharedKey
	})
	return &sh, ok
}

// encryptedExtensions reads the QUIC transport parameters of an
// EncryptedExtensions body (parameter ID to value), and whether the server
// accepted 0-RTT (RFC 8446 section 4.2.10).
func encryptedExtensions(body []byte) (params map[uint64][]byte, earlyData, ok bool) {
	s := cryptobyte.String(body)
	var exts cryptobyte.String
	if !s.ReadUint16LengthPrefixed(&exts) {
		return nil, false, false
	}
	ok = eachExtension(exts, func(typ uint16, data []byte) {
		earlyData = earlyData || typ == extEarlyData
		if typ != extTransportParameters {
			return
		}
		params = map[uint64][]byte{}
		for len(data) > 0 {
			id, k1, ok1 := readVarint(data)
			if !ok1 {
				return
			}
			n, k2, ok2 := readVarint(data[k1:])
			if !ok2 || uint64(len(data)-k1-k2) < n {
				return
			}
			params[id] = data[k1+k2 : k1+k2+int(n)]
			data = data[k1+k2+int(n):]
		}
	})
	return params, earlyData, ok && params != nil
}

func eachExtension(exts cryptobyte.String, f func(typ uint16, data []byte)) bool {
	for !exts.Empty() {
		var typ uint16
		var data cryptobyte.String
		if !exts.ReadUint16(&typ) || !exts.ReadUint16LengthPrefixed(&data) {
			return false
		}
		f(typ, data)
	}
	return true
}

// cryptoStream reassembles the CRYPTO data of one space and direction.
type cryptoStream struct {
	segments map[uint64][]byte
	// end is one past the last byte any frame carried.
	end uint64
}

func (c *cryptoStream) add(f cryptoFrame) {
	if c.segments == nil {
		c.segments = map[uint64][]byte{}
	}
	if old, ok := c.segments[f.offset]; !ok || len(old) < len(f.data) {
		c.segments[f.offset] = f.data
	}
	c.end = max(c.end, f.offset+uint64(len(f.data)))
}

// contiguous returns the data from offset 0 up to the first gap.
func (c *cryptoStream) contiguous() []byte {
	var out []byte
	for {
		progressed := false
		for off, d := range c.segments {
			if off <= uint64(len(out)) && off+uint64(len(d)) > uint64(len(out)) {
				out = append(out, d[uint64(len(out))-off:]...)
				progressed = true
			}
		}
		if !progressed {
			return out
		}
	}
}
