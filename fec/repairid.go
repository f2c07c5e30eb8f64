package fec

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// RepairID is the Repair FEC Payload ID of RFC 8681 section 4.1.3, which
// heads every repair packet:
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|       Repair_Key              |  DT   |NSS (# src symb in ew.)|
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                            FSS_ESI                            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// in network byte order. The encoding window is the NSS source symbols
// with ESIs FirstESI, FirstESI+1, ..., FirstESI+NSS-1 (mod 2^32).
type RepairID struct {
	Key      uint16 // Repair_Key: seeds the coefficient PRNG
	DT       uint8  // density threshold, 0..15
	NSS      uint16 // number of source symbols in the window, 1..4095
	FirstESI uint32 // FSS_ESI: ESI of the first source symbol of the window
}

const (
	// RepairIDLen is the size of a Repair FEC Payload ID on the wire.
	RepairIDLen = 8
	// MaxNSS is the largest window a repair can describe: NSS is 12 bits.
	MaxNSS = 1<<12 - 1
)

var (
	// ErrShortRepairID reports input shorter than RepairIDLen.
	ErrShortRepairID = errors.New("fec: repair FEC payload ID shorter than 8 bytes")
	// ErrBadNSS reports a window size of 0 (an empty window) or above
	// MaxNSS.
	ErrBadNSS = errors.New("fec: repair window size NSS must be 1..4095")
)

// Validate reports whether id can be put on the wire as is: DT <= 15 and
// 1 <= NSS <= 4095.
func (id RepairID) Validate() error {
	if id.DT > MaxDT {
		return fmt.Errorf("%w: %d", ErrBadDT, id.DT)
	}
	if id.NSS == 0 || id.NSS > MaxNSS {
		return fmt.Errorf("%w: %d", ErrBadNSS, id.NSS)
	}
	return nil
}

// LastESI is the ESI of the newest source symbol of the window.
func (id RepairID) LastESI() uint32 { return id.FirstESI + uint32(id.NSS) - 1 }

// Append appends the 8-byte wire form of id to b. Fields wider than the
// wire allows are truncated to their low 4 (DT) and 12 (NSS) bits; call
// Validate first when id does not come from this package's encoder.
func (id RepairID) Append(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, id.Key)
	b = binary.BigEndian.AppendUint16(b, uint16(id.DT&0xF)<<12|id.NSS&MaxNSS)
	return binary.BigEndian.AppendUint32(b, id.FirstESI)
}

// ParseRepairID reads a Repair FEC Payload ID from the start of b. It
// fails on input shorter than RepairIDLen and on NSS = 0. (DT has only
// four bits on the wire, so it cannot exceed 15 here.)
func ParseRepairID(b []byte) (RepairID, error) {
	if len(b) < RepairIDLen {
		return RepairID{}, fmt.Errorf("%w: got %d", ErrShortRepairID, len(b))
	}
	dtNSS := binary.BigEndian.Uint16(b[2:4])
	id := RepairID{
		Key:      binary.BigEndian.Uint16(b[0:2]),
		DT:       uint8(dtNSS >> 12),
		NSS:      dtNSS & MaxNSS,
		FirstESI: binary.BigEndian.Uint32(b[4:8]),
	}
	if id.NSS == 0 {
		return RepairID{}, fmt.Errorf("%w: 0", ErrBadNSS)
	}
	return id, nil
}

// esiBefore reports whether ESI a comes before b in serial-number order
// (RFC 1982 with 32-bit serials): ESIs wrap from 2^32-1 to 0, and a
// window may straddle the wrap, so plain < would be wrong.
func esiBefore(a, b uint32) bool { return int32(a-b) < 0 }
