package wire

import (
	"errors"
	"fmt"
	"math"
)

// MaxPacketNumber is the largest packet number (RFC 9000 section 12.3).
const MaxPacketNumber = MaxVarint

// InvalidPacketNumber stands for "no packet yet", e.g. no packet
// acknowledged in a packet number space.
const InvalidPacketNumber uint64 = math.MaxUint64

// ErrPacketNumber reports a packet number or packet number length that
// cannot be encoded.
var ErrPacketNumber = errors.New("quic wire: invalid packet number")

// PacketNumberLen returns how many bytes the sender needs to encode pn so
// that a receiver that has seen up to largestAcked recovers it: the
// encoding must span more than twice the packets in flight (RFC 9000
// section 17.1 and appendix A.2). largestAcked is InvalidPacketNumber
// before any acknowledgment.
func PacketNumberLen(pn, largestAcked uint64) (int, error) {
	if pn > MaxPacketNumber {
		return 0, fmt.Errorf("packet number %d above 2^62-1: %w", pn, ErrPacketNumber)
	}
	unacked := pn + 1
	if largestAcked != InvalidPacketNumber {
		if pn <= largestAcked {
			return 0, fmt.Errorf("packet number %d not above largest acknowledged %d: %w", pn, largestAcked, ErrPacketNumber)
		}
		unacked = pn - largestAcked
	}
	// Appendix A.2 asks for log2(unacked)+1 bits rounded up to bytes,
	// that is the smallest n with unacked <= 2^(8n-1).
	for n := 1; n <= 4; n++ {
		if unacked <= 1<<(8*n-1) {
			return n, nil
		}
	}
	return 0, fmt.Errorf("%d packets unacknowledged exceed a 4-byte packet number: %w", unacked, ErrPacketNumber)
}

// DecodePacketNumber recovers a full packet number from its pnLen-byte
// truncation, given the largest packet number received so far in the space
// (InvalidPacketNumber if none): the value closest to largest+1 with those
// low bits (RFC 9000 appendix A.3).
func DecodePacketNumber(largest, truncated uint64, pnLen int) (uint64, error) {
	if pnLen < 1 || pnLen > 4 {
		return 0, fmt.Errorf("packet number length %d: %w", pnLen, ErrPacketNumber)
	}
	win := uint64(1) << (8 * pnLen)
	if truncated >= win {
		return 0, fmt.Errorf("truncated packet number %d does not fit %d bytes: %w", truncated, pnLen, ErrPacketNumber)
	}
	expected := largest + 1 // InvalidPacketNumber+1 wraps to 0, as wanted
	hwin := win / 2
	candidate := expected&^(win-1) | truncated
	if expected >= hwin && candidate <= expected-hwin && candidate < 1<<62-win {
		return candidate + win, nil
	}
	if candidate > expected+hwin && candidate >= win {
		return candidate - win, nil
	}
	return candidate, nil
}

// AppendPacketNumber appends the pnLen low-order bytes of pn.
func AppendPacketNumber(b []byte, pn uint64, pnLen int) ([]byte, error) {
	if err := checkPacketNumber(pn, pnLen); err != nil {
		return b, err
	}
	return appendPacketNumberUnchecked(b, pn, pnLen), nil
}

// ParsePacketNumber reads a pnLen-byte truncated packet number.
func ParsePacketNumber(b []byte, pnLen int) (uint64, int, error) {
	if pnLen < 1 || pnLen > 4 {
		return 0, 0, fmt.Errorf("packet number length %d: %w", pnLen, ErrPacketNumber)
	}
	if len(b) < pnLen {
		return 0, 0, fmt.Errorf("packet number of %d bytes: %w", pnLen, ErrTruncated)
	}
	var pn uint64
	for _, x := range b[:pnLen] {
		pn = pn<<8 | uint64(x)
	}
	return pn, pnLen, nil
}

func checkPacketNumber(pn uint64, pnLen int) error {
	if pnLen < 1 || pnLen > 4 {
		return fmt.Errorf("packet number length %d: %w", pnLen, ErrPacketNumber)
	}
	if pn > MaxPacketNumber {
		return fmt.Errorf("packet number %d above 2^62-1: %w", pn, ErrPacketNumber)
	}
	return nil
}

func appendPacketNumberUnchecked(b []byte, pn uint64, pnLen int) []byte {
	for i := pnLen - 1; i >= 0; i-- {
		b = append(b, byte(pn>>(8*i)))
	}
	return b
}
