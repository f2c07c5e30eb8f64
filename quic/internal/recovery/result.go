package recovery

// Result is what an event did to the tracked packets. The Sender owns the
// slices and reuses them: a Result is valid until the next call into the
// Sender. Within a slice, packets are in ascending packet number order.
type Result struct {
	// Acked are the packets newly acknowledged: their frames are
	// delivered.
	Acked []PacketInfo
	// Lost are the packets newly declared lost: retransmit what they
	// carried that still needs delivery (RFC 9000 section 13.3). Each
	// carries the rule that declared it lost (PacketInfo.LossTrigger).
	Lost []PacketInfo
	// LateAcked are packets declared lost earlier and acknowledged now
	// (a spurious loss): a retransmission of their frames still queued
	// can be dropped.
	LateAcked []PacketInfo
	// Recovered are packets the peer recovered with FEC: their frames are
	// delivered and must not be retransmitted.
	Recovered []PacketInfo
	// Discarded are the packets dropped with their space's keys: neither
	// acknowledged nor lost (RFC 9002 section 6.4).
	Discarded []PacketInfo
	// PersistentCongestion: the losses of this event established
	// persistent congestion (RFC 9002 section 7.6).
	PersistentCongestion bool
	// Probe, set by OnTimeout, asks for probe packets.
	Probe Probe
}

// Probe asks the core to send Count ack-eliciting packets in Space now,
// ignoring the congestion window and the pacer (RFC 9002 section 6.2.4).
// Count is zero when no probe is due.
type Probe struct {
	Space Space
	Count int
	// AntiDeadlock: the client has nothing in flight and its peer has not
	// validated its address; send a padded Initial or a Handshake packet
	// (RFC 9002 section 6.2.2.1).
	AntiDeadlock bool
}

func (r *Result) reset() {
	r.Acked = r.Acked[:0]
	r.Lost = r.Lost[:0]
	r.LateAcked = r.LateAcked[:0]
	r.Recovered = r.Recovered[:0]
	r.Discarded = r.Discarded[:0]
	r.PersistentCongestion = false
	r.Probe = Probe{}
}
