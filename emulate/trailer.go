//go:build linux

package emulate

import (
	"encoding/binary"
	"hash/crc32"
	"time"
)

// A relay datagram crosses the model with a trailer as long as the IP and
// UDP headers it would carry on a real link (see the package comment), so
// that rates and queue limits count header bytes. The trailer says which
// flow the datagram belongs to and when it arrived; a checksum tells a
// trailer the link corrupted from a good one, and such a datagram is
// dropped, as a kernel drops a packet whose headers fail their checksum.
//
//	0  flow id (4)   4  arrival, ns since the epoch (8)
//	12 payload length (4)   16 CRC-32 of bytes 0..15 (4)   20 zero padding
const trailerFields = 20

type trailer struct {
	flow    uint32
	arrival time.Duration
}

// appendTrailer appends a trailer of size bytes (at least trailerFields)
// to the payload in b.
func appendTrailer(b []byte, size int, t trailer) []byte {
	payloadLen := len(b)
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, t.flow)
	b = binary.BigEndian.AppendUint64(b, uint64(t.arrival))
	b = binary.BigEndian.AppendUint32(b, uint32(payloadLen))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b[start:]))
	for range size - trailerFields {
		b = append(b, 0)
	}
	return b
}

// splitTrailer returns the payload and trailer of a datagram that crossed
// the model, or ok false when the trailer is damaged.
func splitTrailer(b []byte, size int) (payload []byte, t trailer, ok bool) {
	if len(b) < size {
		return nil, t, false
	}
	payload, tail := b[:len(b)-size], b[len(b)-size:]
	if crc32.ChecksumIEEE(tail[:16]) != binary.BigEndian.Uint32(tail[16:]) ||
		binary.BigEndian.Uint32(tail[12:]) != uint32(len(payload)) {
		return nil, t, false
	}
	t.flow = binary.BigEndian.Uint32(tail[0:])
	t.arrival = time.Duration(binary.BigEndian.Uint64(tail[4:]))
	return payload, t, true
}
