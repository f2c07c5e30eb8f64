package recovery

// LossTrigger is the rule that declared a packet lost, as qlog's
// recovery:packet_lost event names it (draft-ietf-quic-qlog-quic-events,
// "packet_lost"): a tool that draws a connection's losses tells reordering
// from delay by it.
//
// The third trigger qlog knows, pto_expired, is never given: RFC 9002
// section 6.2.4 lets a sender declare packets lost when a probe timeout
// expires, and this Sender does not; a PTO sends probes and leaves loss to
// the two thresholds.
type LossTrigger uint8

const (
	// LossReorderingThreshold: kPacketThreshold packets sent after it
	// were acknowledged (RFC 9002 section 6.1.1).
	LossReorderingThreshold LossTrigger = iota + 1
	// LossTimeThreshold: it was sent more than the loss delay before the
	// last acknowledged packet arrived (RFC 9002 section 6.1.2), or a FEC
	// repair's hold on it ran out (CoverPacket), which is a time too.
	LossTimeThreshold
)

// String is the qlog name of the trigger.
func (t LossTrigger) String() string {
	switch t {
	case LossReorderingThreshold:
		return "reordering_threshold"
	case LossTimeThreshold:
		return "time_threshold"
	}
	return "unknown"
}

// lossTrigger names the rule under which rec, an outstanding packet of sp
// that lossTimeOf found lost, was declared lost. A packet a repair held
// past the thresholds was let go when the hold's time ran out.
func (s *Sender) lossTrigger(sp *spaceState, rec *sentPacket) LossTrigger {
	if rec.flags&flagHeld == 0 && sp.largestAcked >= rec.number+s.cfg.PacketThreshold {
		return LossReorderingThreshold
	}
	return LossTimeThreshold
}
