package recovery

import "time"

// SentPacket describes a packet the core has just sent.
type SentPacket struct {
	Space  Space
	Number uint64
	// Bytes is the size of the UDP payload the packet occupies.
	Bytes int
	// AckEliciting: the packet holds a frame other than ACK, PADDING or
	// CONNECTION_CLOSE (RFC 9002 section 2).
	AckEliciting bool
	// InFlight: the packet counts toward bytes in flight and congestion
	// control (ack-eliciting or padded; RFC 9002 section 2).
	InFlight bool
	// Repair: the packet carries FEC redundancy and no data of its own
	// (a FEC_REPAIR frame, perhaps with ACK frames). Under FECHide its
	// loss is no congestion signal (fec_hide.go), nor under FECAuto
	// unless the path shows congestion (fec_auto.go).
	Repair bool
	// Source: the packet is a FEC source symbol, which the peer may yet
	// rebuild after it is declared lost. Under FECHide its loss signals
	// congestion only once the FEC report would have come (fec_defer.go);
	// under FECAuto too, unless the path shows congestion (fec_auto.go).
	Source bool
	// Ref is the core's own handle for what the packet carried (an index
	// into its table of retransmittable frames, a stream offset, anything).
	// The Sender stores it and gives it back when the packet is
	// acknowledged, lost, recovered or discarded, so nothing allocates per
	// packet.
	Ref uint64
}

// PacketInfo is a tracked packet as the Sender reports it back.
type PacketInfo struct {
	Space        Space
	Number       uint64
	TimeSent     time.Duration
	Bytes        int
	AckEliciting bool
	InFlight     bool
	// AppLimited: the packet was sent while the sender was application
	// limited, so its acknowledgement does not grow the window (RFC 9002
	// section 7.8).
	AppLimited bool
	// PathProbe: the packet is a path MTU probe (MarkPathProbe).
	PathProbe bool
	// HiddenRepair: a repair packet whose loss is no congestion signal:
	// sent under FECHide, or under FECAuto and not declared lost while
	// the path showed congestion.
	HiddenRepair bool
	// LossTrigger, in Result.Lost, is the rule that declared the packet
	// lost; zero elsewhere.
	LossTrigger LossTrigger
	Ref         uint64
}

// packetState is where a tracked packet is in its life.
type packetState uint8

const (
	// stateSkipped is a packet number the core never used (RFC 9000
	// section 21.4 lets a sender skip numbers to detect optimistic ACKs).
	stateSkipped packetState = iota
	stateOutstanding
	stateAcked
	// stateLost: declared lost, kept for a while so that a late
	// acknowledgement is recognized as a spurious loss.
	stateLost
	// stateLostExpired: declared lost and no longer watched.
	stateLostExpired
	// stateRecovered: reported recovered by the peer's FEC decoder.
	stateRecovered
	// stateDiscarded: dropped with its keys, or as rejected 0-RTT.
	stateDiscarded
)

const (
	flagAckEliciting uint8 = 1 << iota
	flagInFlight
	flagAppLimited
	// flagCovered: a repair that covers the packet is in flight (FEC).
	flagCovered
	// flagHeld: a repair deadline has postponed the packet's loss.
	flagHeld
	// flagPathProbe: a path MTU probe, whose loss is no congestion
	// signal (pathprobe.go).
	flagPathProbe
	// flagHiddenRepair: a repair packet under FECHide (or FECAuto, until
	// a loss on a congested path clears it), whose loss is no congestion
	// signal either (fec_hide.go).
	flagHiddenRepair
	// flagDeferSignal: a FEC source under FECHide (or FECAuto, until a
	// loss on a congested path clears it), whose loss signals only if the
	// peer does not report it rebuilt in time (fec_defer.go).
	flagDeferSignal
)

// sentPacket is the Sender's record of a packet. It stays a plain value
// (no pointers) so that the ring holding thousands of them is cheap for
// the garbage collector.
type sentPacket struct {
	number   uint64
	timeSent time.Duration
	ref      uint64
	bytes    int32
	state    packetState
	flags    uint8
	// deadline is the repair deadline while outstanding and covered, and
	// the time the record stops being watched once lost.
	deadline time.Duration
	// Delivery-rate state at send time (draft-cheng-iccrg-delivery-rate-
	// estimation section 3.2).
	delivered     int64
	deliveredTime time.Duration
	firstSentTime time.Duration
	// lost is the connection's lost byte count at send time and
	// txInFlight the bytes in flight just after sending: BBR uses both.
	lost       int64
	txInFlight int64
}

func (p *sentPacket) has(f uint8) bool { return p.flags&f != 0 }

func (p *sentPacket) info(space Space) PacketInfo {
	return PacketInfo{
		Space:        space,
		Number:       p.number,
		TimeSent:     p.timeSent,
		Bytes:        int(p.bytes),
		AckEliciting: p.has(flagAckEliciting),
		InFlight:     p.has(flagInFlight),
		AppLimited:   p.has(flagAppLimited),
		PathProbe:    p.has(flagPathProbe),
		HiddenRepair: p.has(flagHiddenRepair),
		Ref:          p.ref,
	}
}
