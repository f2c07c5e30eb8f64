package connectip

import "sync/atomic"

// Stats are a session's counters. Its fields marshal to JSON as they are.
type Stats struct {
	// Sent counts the IP packets given to WritePacket, Received those that
	// came from the peer.
	Sent     DirectionStats `json:"sent"`
	Received DirectionStats `json:"received"`

	CapsulesReceived uint64 `json:"capsules_received"`
	// CapsulesIgnored counts capsules of types this package does not know
	// (RFC 9297 section 3.2 asks to skip them).
	CapsulesIgnored uint64 `json:"capsules_ignored"`
	// MalformedCapsules counts capsules that broke RFC 9484's rules; each
	// ends the session (RFC 9297 section 3.3).
	MalformedCapsules uint64 `json:"malformed_capsules"`
}

// DirectionStats counts the IP packets of one direction.
type DirectionStats struct {
	// Packets and Bytes count what was forwarded (bytes of IP packets).
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
	Dropped Drops  `json:"dropped"`
}

// Drops counts dropped packets by reason.
type Drops struct {
	// Malformed: not one whole IPv4 or IPv6 packet, or a datagram without
	// a Context ID.
	Malformed uint64 `json:"malformed"`
	// SourceNotAllowed: a source outside the addresses assigned to the
	// sending end (RFC 9484 section 11, BCP 38).
	SourceNotAllowed uint64 `json:"source_not_allowed"`
	// DestinationNotRouted: a destination or protocol outside the routes
	// advertised to the sending end (RFC 9484 section 4.7.3), or, received,
	// not an address of the receiving end either.
	DestinationNotRouted uint64 `json:"destination_not_routed"`
	// HopLimit: the TTL or Hop Limit ran out (RFC 9484 section 7.2).
	HopLimit uint64 `json:"hop_limit"`
	// TooBig: larger than the tunnel's MTU (RFC 9484 section 10.1).
	TooBig uint64 `json:"too_big"`
	// UnknownContext: a datagram of a Context ID nobody registered (RFC
	// 9484 section 6).
	UnknownContext uint64 `json:"unknown_context"`
}

// counters are the live, atomic form of Stats.
type counters struct {
	sent, received                 dirCounters
	capsules, ignored, badCapsules atomic.Uint64
}

type dirCounters struct {
	packets, bytes                                        atomic.Uint64
	malformed, source, dest, hopLimit, tooBig, unknownCtx atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Sent: c.sent.snapshot(), Received: c.received.snapshot(),
		CapsulesReceived: c.capsules.Load(), CapsulesIgnored: c.ignored.Load(),
		MalformedCapsules: c.badCapsules.Load(),
	}
}

func (d *dirCounters) snapshot() DirectionStats {
	return DirectionStats{
		Packets: d.packets.Load(), Bytes: d.bytes.Load(),
		Dropped: Drops{
			Malformed: d.malformed.Load(), SourceNotAllowed: d.source.Load(),
			DestinationNotRouted: d.dest.Load(), HopLimit: d.hopLimit.Load(),
			TooBig: d.tooBig.Load(), UnknownContext: d.unknownCtx.Load(),
		},
	}
}

func (d *dirCounters) forwarded(n int) {
	d.packets.Add(1)
	d.bytes.Add(uint64(n))
}
