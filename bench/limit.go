package bench

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/netsim"
)

// Limit is the physical limit of a download: the fastest a stack that
// needs handshakeRTTs round trips before its request could possibly
// finish over the profile's path.
//
//	limit = (handshakeRTTs + 1) x RTT + 8 x size / downlink rate
//
// The extra round trip carries the request up and the first byte of the
// response down; the serialization term is the whole body at the downlink's
// peak rate. Headers (IP, TCP or UDP, TLS records, QUIC) are left out on
// purpose: the limit is the same payload bound for every stack, and a
// stack's header overhead shows in its ratio to it (close to 4% for TLS
// over TCP with timestamps at a 1500-byte MTU: 1448 payload bytes a packet). Queueing, loss and slow start are what
// the measurement shows against it. A downlink without a rate limit
// contributes no serialization time.
func Limit(p netsim.Profile, handshakeRTTs int, size int64) time.Duration {
	d := time.Duration(handshakeRTTs+1) * p.RTT()
	if rate := p.Down.PeakRateBps(); rate > 0 {
		d += time.Duration(float64(size) * 8 / rate * float64(time.Second))
	}
	return d
}

// LimitFormula spells the limit out for a stack, for tables and JSON.
func LimitFormula(p netsim.Profile, handshakeRTTs int) string {
	rtts := fmt.Sprintf("%d RTT (%d handshake + 1 request)", handshakeRTTs+1, handshakeRTTs)
	if p.Down.PeakRateBps() == 0 {
		return rtts + fmt.Sprintf(", RTT %v", p.RTT())
	}
	return fmt.Sprintf("%s + 8*size/rate, RTT %v, rate %.4g Mbit/s", rtts, p.RTT(), p.Down.PeakRateBps()/1e6)
}
