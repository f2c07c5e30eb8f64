package capture

import (
	"encoding/binary"

	"github.com/satquic/satquic/internal/varint"
)

// PacketType is a QUIC packet's type, whatever the version's encoding.
type PacketType uint8

// The packet types.
const (
	TypeUnknown PacketType = iota
	TypeInitial
	Type0RTT
	TypeHandshake
	TypeRetry
	TypeVersionNegotiation
	Type1RTT
)

// longType maps the two type bits of a long header to a type: QUIC v2
// rotated them (RFC 9369 section 3.2).
func longType(v uint32, bits byte) PacketType {
	if v == Version2 {
		return [4]PacketType{TypeRetry, TypeInitial, Type0RTT, TypeHandshake}[bits]
	}
	return [4]PacketType{TypeInitial, Type0RTT, TypeHandshake, TypeRetry}[bits]
}

// readVarint reads a variable-length integer (RFC 9000 section 16).
func readVarint(b []byte) (uint64, int, bool) {
	v, n := varint.Parse(b)
	return v, n, n > 0
}

// rawPacket is one QUIC packet as parsed from its datagram, before its
// protection is removed.
type rawPacket struct {
	typ        PacketType
	version    uint32
	dcid, scid []byte
	token      []byte // Initial and Retry
	// data is the whole packet: the header, and for protected packets the
	// packet number and payload.
	data []byte
	// pnOffset is where the packet number starts in data (protected
	// long-header packets); short headers learn it once the length of
	// their connection ID is known.
	pnOffset int
	short    bool
}

// splitDatagram parses the coalesced packets of a datagram. A short
// header takes the rest of the datagram; a long header of a version it
// does not know ends the parse, as does anything malformed, so the
// packets returned are those it could delimit.
func splitDatagram(d []byte) []rawPacket {
	var out []rawPacket
	for len(d) > 0 {
		if d[0]&0x80 == 0 {
			return append(out, rawPacket{typ: Type1RTT, data: d, short: true})
		}
		p, n, ok := parseLong(d)
		if !ok {
			return out
		}
		out = append(out, p)
		d = d[n:]
	}
	return out
}

// parseLong parses one long-header packet at the start of d and returns
// it and its length.
func parseLong(d []byte) (rawPacket, int, bool) {
	var p rawPacket
	if len(d) < 7 {
		return p, 0, false
	}
	p.version = binary.BigEndian.Uint32(d[1:5])
	pos := 5
	cid := func() ([]byte, bool) {
		if pos >= len(d) {
			return nil, false
		}
		n := int(d[pos])
		if n > 20 || pos+1+n > len(d) {
			return nil, false
		}
		c := d[pos+1 : pos+1+n]
		pos += 1 + n
		return c, true
	}
	var ok bool
	if p.dcid, ok = cid(); !ok {
		return p, 0, false
	}
	if p.scid, ok = cid(); !ok {
		return p, 0, false
	}
	if p.version == 0 {
		p.typ, p.data = TypeVersionNegotiation, d
		return p, len(d), true
	}
	if p.version != Version1 && p.version != Version2 {
		return p, 0, false
	}
	p.typ = longType(p.version, (d[0]>>4)&3)
	if p.typ == TypeRetry {
		if len(d)-pos < 16 {
			return p, 0, false
		}
		p.token, p.data = d[pos:len(d)-16], d
		return p, len(d), true
	}
	if p.typ == TypeInitial {
		n, k, ok := readVarint(d[pos:])
		if !ok || uint64(len(d)-pos-k) < n {
			return p, 0, false
		}
		p.token = d[pos+k : pos+k+int(n)]
		pos += k + int(n)
	}
	length, k, ok := readVarint(d[pos:])
	if !ok || uint64(len(d)-pos-k) < length {
		return p, 0, false
	}
	p.pnOffset = pos + k
	end := p.pnOffset + int(length)
	p.data = d[:end]
	return p, end, true
}
