package tunnel

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
)

// flowHash hashes what identifies the flow of IP packet p: its two
// addresses, its protocol, and for TCP, UDP, UDP-Lite and SCTP its two
// ports. The two ends are put in a fixed order first, so that both
// directions of a flow hash alike and take the same lane. The header is
// only bounds-checked: a packet too short or of an unknown version hashes
// to 0, and the session it reaches drops it. The seed is the Forwarder's
// own, so that nobody can choose flows that all land on one lane.
func flowHash(seed maphash.Seed, p []byte) uint64 {
	if len(p) == 0 {
		return 0
	}
	var addrLen, srcOff, l4 int
	var proto byte
	switch p[0] >> 4 {
	case 4:
		if len(p) < 20 {
			return 0
		}
		addrLen, srcOff, proto, l4 = 4, 12, p[9], int(p[0]&0x0f)*4
		if binary.BigEndian.Uint16(p[6:8])&0x1fff != 0 {
			l4 = len(p) // a later fragment carries no ports
		}
	case 6:
		if len(p) < 40 {
			return 0
		}
		// Extension headers are not walked: their packets keep to one
		// lane per address pair and header, which keeps them in order.
		addrLen, srcOff, proto, l4 = 16, 8, p[6], 40
	default:
		return 0
	}
	a, b := p[srcOff:srcOff+addrLen], p[srcOff+addrLen:srcOff+2*addrLen]
	var pa, pb []byte
	if hasPorts(proto) && len(p) >= l4+4 {
		pa, pb = p[l4:l4+2], p[l4+2:l4+4]
	}
	if c := bytes.Compare(a, b); c > 0 || c == 0 && bytes.Compare(pa, pb) > 0 {
		a, b, pa, pb = b, a, pb, pa
	}
	var h maphash.Hash
	h.SetSeed(seed)
	h.Write(a)
	h.Write(pa)
	h.Write(b)
	h.Write(pb)
	h.WriteByte(proto)
	return h.Sum64()
}

// hasPorts reports whether the protocol's header starts with two 16-bit
// ports.
func hasPorts(proto byte) bool {
	switch proto {
	case 6, 17, 132, 136: // TCP, UDP, SCTP, UDP-Lite
		return true
	}
	return false
}
