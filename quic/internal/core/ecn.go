package core

import (
	"fmt"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// ECNState is where the validation of ECN on the path is (RFC 9000
// section 13.4.2, with the states of its appendix A.4).
type ECNState uint8

// The ECN states.
const (
	// ECNDisabled: Config.DisableECN; nothing is marked, counted or
	// reported.
	ECNDisabled ECNState = iota
	// ECNTesting: the first 1-RTT datagrams go out ECT(0), to learn
	// whether the path and the peer carry ECN.
	ECNTesting
	// ECNUnknown: the testing period is over and datagrams go out
	// unmarked until the peer's counts show the marks arrived.
	ECNUnknown
	// ECNCapable: the counts validated; every 1-RTT datagram is marked
	// and CE counts are congestion signals.
	ECNCapable
	// ECNFailed: validation failed, or every marked packet of the testing
	// period was lost; nothing is marked any more.
	ECNFailed
)

// String is the state's name in qlog.
func (s ECNState) String() string {
	switch s {
	case ECNDisabled:
		return "disabled"
	case ECNTesting:
		return "testing"
	case ECNUnknown:
		return "unknown"
	case ECNCapable:
		return "capable"
	case ECNFailed:
		return "failed"
	}
	return fmt.Sprintf("ECNState(%d)", uint8(s))
}

// The testing period: RFC 9000 section 13.4.2 suggests marking the first
// ten packets, or marking for three PTOs, so that a path that drops marked
// packets costs little and is recognized.
const (
	ecnTestPackets = 10
	ecnTestPTOs    = 3
)

// ECNStats count a connection's ECN work.
type ECNStats struct {
	State ECNState
	// PacketsMarked counts packets sent ECT(0).
	PacketsMarked uint64
	// ECTReceived counts packets that arrived ECT(0) or ECT(1), and
	// CEReceived those that arrived CE: what this endpoint reports to
	// the peer in its ACK frames.
	ECTReceived, CEReceived uint64
	// CEReported is the CE count the peer reported, over all packet
	// number spaces, once validated: how often the path marked what
	// this endpoint sent.
	CEReported uint64
	// Failure says why validation failed (ECNFailed).
	Failure string
}

// ecnState is the connection's ECN: the codepoint it sends with, the
// counts of what it received (RFC 9000 section 13.4.1), and the validation
// of the counts the peer reports (section 13.4.2). It marks only datagrams
// made of 1-RTT packets: the handshake keeps its datagrams clear of a path
// that might drop marked ones, as a lost handshake packet costs a PTO.
type ecnState struct {
	c     *Conn
	state ECNState

	// testEnd is three PTOs after the first marked packet went out, as
	// the PTO was then: a handshake that waited for the peer must not
	// end the testing period before it marked more than a packet or
	// two. testSent and testLost count the marked packets of the
	// testing period and those among them declared lost.
	testEnd            time.Duration
	testSent, testLost uint64

	// sentECT0 counts the packets sent ECT(0) per space; peer holds the
	// last counts the peer reported that validated.
	sentECT0 [numSpaces]uint64
	peer     [numSpaces]wire.ECNCounts
	// recv counts the codepoints of the packets received per space.
	recv [numSpaces]wire.ECNCounts

	// rx is the codepoint of the datagram being processed; last the one
	// of the datagram being built, which NextDatagram returns with it.
	rx, last ecn.Codepoint

	marked  uint64
	failure string
}

func (e *ecnState) init(c *Conn, disabled bool) {
	e.c = c
	e.state = ECNTesting
	if disabled {
		e.state = ECNDisabled
	}
}

// ECNState reports where ECN validation is.
func (c *Conn) ECNState() ECNState { return c.ecn.state }

// codepoint decides the codepoint of a datagram whose n planned packets
// are about to be sealed at now.
func (e *ecnState) codepoint(now time.Duration, plan []plannedPacket) ecn.Codepoint {
	for i := range plan {
		if plan[i].space != spaceApp || plan[i].early {
			return ecn.NotECT
		}
	}
	if e.state == ECNTesting && e.testSent > 0 && (e.testSent >= ecnTestPackets || now >= e.testEnd) {
		e.setState(now, ECNUnknown, "testing period over")
		e.checkTestLosses(now)
	}
	if e.state == ECNTesting || e.state == ECNCapable {
		return ecn.ECT0
	}
	return ecn.NotECT
}

// onSent records that a packet of space s went out with codepoint cp.
func (e *ecnState) onSent(now time.Duration, s recovery.Space, rec *sentPacket, cp ecn.Codepoint) {
	rec.ect = cp == ecn.ECT0
	if !rec.ect {
		return
	}
	e.sentECT0[s]++
	e.marked++
	if e.state == ECNTesting {
		if e.testSent == 0 {
			e.testEnd = now + ecnTestPTOs*probeTimeout(e.c.sender.RTT())
		}
		e.testSent++
	}
}

// onLost notes the loss of a packet, declared at now: if every marked
// packet of the testing period is lost, the path may drop marked packets,
// and marking stops (RFC 9000 section 13.4.2).
func (e *ecnState) onLost(now time.Duration, rec *sentPacket) {
	if rec == nil || !rec.ect || (e.state != ECNTesting && e.state != ECNUnknown) {
		return
	}
	e.testLost++
	e.checkTestLosses(now)
}

func (e *ecnState) checkTestLosses(now time.Duration) {
	if e.state == ECNUnknown && e.testLost >= e.testSent {
		e.fail(now, "every marked packet of the testing period was lost")
	}
}

// onReceived counts the codepoint of a packet processed in space s (RFC
// 9000 section 13.4.1): the caller skips duplicates and packets that failed
// to decrypt. It reports whether the packet arrived CE-marked.
func (e *ecnState) onReceived(s recovery.Space) bool {
	if e.state == ECNDisabled {
		return false
	}
	r := &e.recv[s]
	switch e.rx {
	case ecn.ECT0:
		r.ECT0++
	case ecn.ECT1:
		r.ECT1++
	case ecn.CE:
		r.CE++
		return true
	}
	return false
}

// fillAck makes f an ACK_ECN frame with the counts of space s, once any
// packet arrived marked (RFC 9000 section 19.3.2). An endpoint that cannot
// read codepoints counts nothing and sends plain ACK frames.
func (e *ecnState) fillAck(s recovery.Space, f *wire.AckFrame) {
	r := e.recv[s]
	if e.state == ECNDisabled || r == (wire.ECNCounts{}) {
		return
	}
	f.HasECN, f.ECN = true, r
}

// ValidateECN checks the ECN counts of an ACK frame processed at now
// against the packets it newly acknowledges (RFC 9000 section 13.4.2.1),
// before loss recovery treats a CE increase as congestion. The core's
// sent-packet records are still live: recovery calls back before the
// Result is handled.
func (e *ecnState) ValidateECN(now time.Duration, s recovery.Space, counts *wire.ECNCounts, acked []recovery.PacketInfo) bool {
	if e.state == ECNDisabled || e.state == ECNFailed || len(acked) == 0 {
		return false
	}
	sp := e.c.spaces[s]
	if sp.largestAcked != wire.InvalidPacketNumber && acked[len(acked)-1].Number <= sp.largestAcked {
		// An ACK frame that does not raise the largest acknowledged
		// may be older than one processed already: its counts are
		// neither checked nor used (section 13.4.2.1).
		return false
	}
	var newlyECT uint64
	for i := range acked {
		if rec := sp.sent.at(acked[i].Number); rec != nil && rec.live && rec.ect {
			newlyECT++
		}
	}
	if counts == nil {
		if newlyECT > 0 {
			e.fail(now, fmt.Sprintf("an ACK frame without ECN counts acknowledges %d ECT(0) packets in the %v space", newlyECT, s))
		}
		return false
	}
	if msg := e.checkCounts(s, counts, newlyECT); msg != "" {
		e.fail(now, msg)
		return false
	}
	e.peer[s] = *counts
	if newlyECT > 0 && (e.state == ECNTesting || e.state == ECNUnknown) {
		e.setState(now, ECNCapable, "counts validated")
	}
	return true
}

// checkCounts returns what is wrong with counts, or "".
func (e *ecnState) checkCounts(s recovery.Space, counts *wire.ECNCounts, newlyECT uint64) string {
	prev := e.peer[s]
	switch {
	case counts.ECT0 < prev.ECT0 || counts.ECT1 < prev.ECT1 || counts.CE < prev.CE:
		return fmt.Sprintf("ECN counts (%d, %d, %d) below the previous (%d, %d, %d)", counts.ECT0, counts.ECT1, counts.CE, prev.ECT0, prev.ECT1, prev.CE)
	case counts.ECT1 > 0:
		// Section 13.4.2.1: a count of a codepoint never sent.
		return fmt.Sprintf("ECT(1) count %d without ECT(1) packets", counts.ECT1)
	case counts.ECT0+counts.CE > e.sentECT0[s]:
		return fmt.Sprintf("ECT(0) and CE counts %d+%d above the %d packets sent ECT(0)", counts.ECT0, counts.CE, e.sentECT0[s])
	case counts.ECT0-prev.ECT0+counts.CE-prev.CE < newlyECT:
		// Section 13.4.2.1: the marks of the newly acknowledged ECT(0)
		// packets must all be counted; fewer means the path cleared
		// them.
		return fmt.Sprintf("ECN counts grew by %d for %d newly acknowledged ECT(0) packets", counts.ECT0-prev.ECT0+counts.CE-prev.CE, newlyECT)
	}
	return ""
}

func (e *ecnState) fail(now time.Duration, why string) {
	if e.state == ECNFailed || e.state == ECNDisabled {
		return
	}
	e.failure = why
	e.setState(now, ECNFailed, why)
}

func (e *ecnState) setState(now time.Duration, s ECNState, trigger string) {
	if e.c.debugf != nil {
		e.c.debugf("%v ECN %v -> %v: %s", now, e.state, s, trigger)
	}
	e.c.qlog.ecnStateUpdated(now, e.state, s, trigger)
	e.state = s
}

// stats returns the ECN counters.
func (e *ecnState) stats() ECNStats {
	s := ECNStats{State: e.state, PacketsMarked: e.marked, Failure: e.failure}
	for i := range e.recv {
		s.ECTReceived += e.recv[i].ECT0 + e.recv[i].ECT1
		s.CEReceived += e.recv[i].CE
		s.CEReported += e.peer[i].CE
	}
	return s
}
