package connectip

import (
	"context"
	"fmt"
)

// givingCarrier is a Carrier that takes the buffers of a batch into its
// QUIC connection's send queue rather than copy them, putting a prefix in
// front of each, and hands back buffers of its own in exchange
// (http3.Stream.GivePrefixedDatagrams).
type givingCarrier interface {
	GivePrefixedDatagrams(prefix []byte, bs [][]byte) (int, error)
	GivePrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error)
}

// GivePackets is WritePackets handing the buffers of the packets that
// pass the checks to a carrier that takes them
// (http3.Stream.GivePrefixedDatagrams), so that no copy of a packet is
// made before its QUIC packet. On return each pkts[i] holds a buffer the
// caller owns: the packet itself where it was refused or the carrier
// copied it, or, where the carrier took it, an empty buffer the carrier
// gave back in exchange, or nil. Over a carrier that cannot take buffers
// it is WritePackets, and pkts is unchanged.
func (s *Session) GivePackets(pkts [][]byte, refused func(i int, icmp []byte, err error)) error {
	gc, ok := s.c.(givingCarrier)
	if !ok {
		return s.WritePackets(pkts, refused)
	}
	if s.ctx.Err() != nil {
		return s.sessionErr(ErrClosed)
	}
	passed := make([][]byte, 0, len(pkts))
	at := make([]int, 0, len(pkts)) // passed[j] is pkts[at[j]]
	limit := s.pathLimit()
	sizes := make([]int, len(pkts)) // pkts[i] changes hands as it is sent
	for i, p := range pkts {
		sizes[i] = len(p)
		if icmp, err := s.check(p, limit); err != nil {
			refused(i, icmp, err)
			continue
		}
		passed = append(passed, p)
		at = append(at, i)
	}
	for len(passed) > 0 {
		var n int
		var err error
		if s.waits {
			n, err = gc.GivePrefixedDatagramsWait(s.ctx, ipContextPrefix, passed)
		} else {
			n, err = gc.GivePrefixedDatagrams(ipContextPrefix, passed)
		}
		// What the carrier gave back in exchange, or left, is the
		// caller's again.
		for j := range passed {
			pkts[at[j]] = passed[j]
		}
		if err != nil {
			return s.sessionErr(fmt.Errorf("connectip: sending a datagram: %w", err))
		}
		for _, i := range at[:n] {
			s.stats.sent.forwarded(sizes[i])
		}
		passed, at = passed[n:], at[n:]
	}
	return nil
}
