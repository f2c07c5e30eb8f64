//go:build linux

package probe

import (
	"encoding/binary"
	"time"
)

// A probe datagram starts with a magic word, its sequence number and the
// time it was sent; the rest is padding up to the configured size. Hello
// datagrams open the relay's flow and tell the sink where replies go.
const (
	magicData  = 0x53515044 // "SQPD"
	magicHello = 0x53515048 // "SQPH"
	headerLen  = 4 + 8 + 8
	// MinSize is the smallest datagram the probe can send.
	MinSize = headerLen
)

func putData(b []byte, seq uint64, sent time.Duration) {
	binary.BigEndian.PutUint32(b[0:], magicData)
	binary.BigEndian.PutUint64(b[4:], seq)
	binary.BigEndian.PutUint64(b[12:], uint64(sent))
}

func putHello(b []byte) {
	clear(b)
	binary.BigEndian.PutUint32(b[0:], magicHello)
}

// parse returns the sequence number and send time of a data datagram.
func parse(b []byte) (seq uint64, sent time.Duration, ok bool) {
	if len(b) < headerLen || binary.BigEndian.Uint32(b) != magicData {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[4:]), time.Duration(binary.BigEndian.Uint64(b[12:])), true
}

func isHello(b []byte) bool {
	return len(b) >= 4 && binary.BigEndian.Uint32(b) == magicHello
}
