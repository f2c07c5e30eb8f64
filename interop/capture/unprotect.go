package capture

import (
	"encoding/binary"
	"errors"
)

// opened is a packet whose protection was removed.
type opened struct {
	pn       uint64
	keyPhase int // 1-RTT: the key phase bit; -1 for long headers
	// key is the index, among the candidates, of the keys that opened it.
	key     int
	payload []byte
}

// unmaskHeader removes header protection from a copy of the packet's
// first byte and packet number (RFC 9001 section 5.4) and returns the
// header with them unmasked, the truncated packet number and its length.
func unmaskHeader(data []byte, pnOffset int, hp headerProtection) (header []byte, truncated uint64, pnLen int, err error) {
	if pnOffset+4+16 > len(data) {
		return nil, 0, 0, errShort
	}
	m := hp.mask(data[pnOffset+4 : pnOffset+20])
	header = make([]byte, pnOffset, pnOffset+4)
	copy(header, data[:pnOffset])
	if header[0]&0x80 != 0 {
		header[0] ^= m[0] & 0x0f
	} else {
		header[0] ^= m[0] & 0x1f
	}
	pnLen = int(header[0]&0x03) + 1
	for i := range pnLen {
		b := data[pnOffset+i] ^ m[1+i]
		header = append(header, b)
		truncated = truncated<<8 | uint64(b)
	}
	return header, truncated, pnLen, nil
}

// decodePacketNumber expands a truncated packet number next to the
// largest one seen in its space (RFC 9000 appendix A.3); largest is -1
// before any.
func decodePacketNumber(largest int64, truncated uint64, pnLen int) uint64 {
	bits := uint(pnLen * 8)
	expected := uint64(largest + 1)
	win := uint64(1) << bits
	half := win / 2
	candidate := (expected &^ (win - 1)) | truncated
	switch {
	case candidate+half <= expected && candidate < (1<<62)-win:
		return candidate + win
	case candidate > expected+half && candidate >= win:
		return candidate - win
	}
	return candidate
}

var errOpen = errors.New("capture: packet does not open with these keys")

// open removes the protection of a packet: its header protection with
// hp, then its payload with the AEAD of whichever of keys fits. keys
// picks the protection for a key phase bit (1-RTT) or -1 (long headers).
func open(data []byte, pnOffset int, largest int64, hp headerProtection, keys func(phase int) []*protection) (opened, error) {
	header, truncated, pnLen, err := unmaskHeader(data, pnOffset, hp)
	if err != nil {
		return opened{}, err
	}
	o := opened{keyPhase: -1}
	if header[0]&0x80 == 0 {
		o.keyPhase = int(header[0]>>2) & 1
	}
	o.pn = decodePacketNumber(largest, truncated, pnLen)
	ciphertext := data[len(header):]
	for i, p := range keys(o.keyPhase) {
		if p == nil {
			continue
		}
		nonce := make([]byte, len(p.iv))
		copy(nonce, p.iv)
		var pnb [8]byte
		binary.BigEndian.PutUint64(pnb[:], o.pn)
		for i := range 8 {
			nonce[len(nonce)-8+i] ^= pnb[i]
		}
		plain, err := p.aead.Open(nil, nonce, ciphertext, header)
		if err == nil {
			o.payload, o.key = plain, i
			return o, nil
		}
	}
	return o, errOpen
}
