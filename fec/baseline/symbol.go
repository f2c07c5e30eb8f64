package baseline

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/satquic/satquic/fec"
)

// Pieces shared by the baseline codes (xor.go, rs.go, maelstrom.go): the
// coded-symbol layout that lets a block code protect packets of different
// lengths, and the errors their repair parsers and decoders return.
//
// Coded symbol layout. Every source packet is coded as
//
//	+-----------------+--------------------+--------------+
//	| length (16, BE) | payload (length B) | zero padding |
//	+-----------------+--------------------+--------------+
//
// padded with zeros to the largest coded symbol of its repair group. The
// code that protects the payloads then protects their lengths too (the
// idea of HIRT's coded_length), so a rebuilt symbol says how long its
// packet was; and since the padding after the payload must be zero, a
// rebuilt symbol with a length beyond the symbol or non-zero padding
// proves the repair inconsistent, and the decoder drops it rather than
// return wrong bytes.

// Errors of the baseline repair parsers and decoders; the returned errors
// wrap one of them with the details.
var (
	// ErrMalformedRepair: the packet is not a well-formed repair
	// of the scheme (wrong tag, truncated, bad field).
	ErrMalformedRepair = errors.New("baseline: malformed repair packet")
	// ErrInconsistentRepair: the repair is well formed but
	// contradicts the decoder's configuration or the sources it holds.
	ErrInconsistentRepair = errors.New("baseline: inconsistent repair packet")
)

const (
	// codedLengthSize is the size of the length prefix of a coded symbol.
	codedLengthSize = 2
	// maxProtectedPayload is the longest payload the length prefix can
	// describe; the value above it is reserved for unprotectedMarker.
	maxProtectedPayload = 0xFFFE
	// unprotectedMarker is the length prefix of a source too long to
	// protect (never a UDP datagram, whose payload is at most 65527
	// bytes). Such a source is coded as the bare marker, so the repairs
	// that cover it stay consistent and protect its neighbours; a decoder
	// that rebuilds the marker knows the packet but cannot return it.
	unprotectedMarker = 0xFFFF
)

// codedSize is the size of payload's coded symbol, without padding.
func codedSize(payload []byte) int {
	if len(payload) > maxProtectedPayload {
		return codedLengthSize
	}
	return codedLengthSize + len(payload)
}

// appendCoded appends payload's coded symbol (without padding) to dst.
func appendCoded(dst, payload []byte) []byte {
	if len(payload) > maxProtectedPayload {
		return binary.BigEndian.AppendUint16(dst, unprotectedMarker)
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(payload)))
	return append(dst, payload...)
}

// xorCodedPayload adds payload's coded symbol into acc, which must be at
// least codedSize(payload) long: acc ^= coded(payload).
func xorCodedPayload(payload, acc []byte) {
	if len(payload) > maxProtectedPayload {
		acc[0] ^= byte(unprotectedMarker >> 8)
		acc[1] ^= byte(unprotectedMarker & 0xFF)
		return
	}
	acc[0] ^= byte(len(payload) >> 8)
	acc[1] ^= byte(len(payload))
	fec.XorSlice(payload, acc[codedLengthSize:])
}

// rebuiltSymbol is a coded symbol recovered by a decoder, checked.
type rebuiltSymbol struct {
	// coded is the symbol without its padding: what the decoder keeps.
	coded []byte
	// protected is false when the symbol is the unprotectedMarker: the
	// packet existed but its bytes were not coded.
	protected bool
}

// payload returns the packet bytes of a protected symbol.
func (s rebuiltSymbol) payload() []byte { return s.coded[codedLengthSize:] }

// checkRebuilt validates a rebuilt, padded coded symbol: its length must
// fit the symbol and every padding byte must be zero.
func checkRebuilt(padded []byte) (rebuiltSymbol, error) {
	if len(padded) < codedLengthSize {
		return rebuiltSymbol{}, fmt.Errorf("%w: rebuilt symbol of %d bytes has no length", ErrInconsistentRepair, len(padded))
	}
	length := int(binary.BigEndian.Uint16(padded))
	end := codedLengthSize + length
	protected := length != unprotectedMarker
	if !protected {
		end = codedLengthSize
	}
	if end > len(padded) {
		return rebuiltSymbol{}, fmt.Errorf("%w: rebuilt length %d exceeds symbol of %d bytes", ErrInconsistentRepair, length, len(padded))
	}
	if !paddingIsZero(padded[end:]) {
		return rebuiltSymbol{}, fmt.Errorf("%w: rebuilt symbol has non-zero padding", ErrInconsistentRepair)
	}
	return rebuiltSymbol{coded: padded[:end], protected: protected}, nil
}

func paddingIsZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// padTo returns b extended with zeros to n bytes (b unchanged if it is
// already that long), reusing b's capacity.
func padTo(b []byte, n int) []byte {
	if len(b) >= n {
		return b
	}
	old := len(b)
	b = slices.Grow(b, n-old)[:n]
	clear(b[old:])
	return b
}

// recoveredCopy builds the Recovered report of a rebuilt symbol; the data
// is copied because the decoder reuses its buffers.
func recoveredCopy(esi uint32, sym rebuiltSymbol) fec.Recovered {
	return fec.Recovered{ESI: esi, Data: slices.Clone(sym.payload())}
}
