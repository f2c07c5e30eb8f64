package wire

import "fmt"

// FrameType is a QUIC frame type (RFC 9000 section 12.4, table 3; RFC 9221
// section 4 for DATAGRAM). The types of ACK, STREAM, MAX_STREAMS,
// STREAMS_BLOCKED, CONNECTION_CLOSE and DATAGRAM carry flag bits.
type FrameType uint64

const (
	FrameTypePadding            FrameType = 0x00
	FrameTypePing               FrameType = 0x01
	FrameTypeAck                FrameType = 0x02
	FrameTypeAckECN             FrameType = 0x03
	FrameTypeResetStream        FrameType = 0x04
	FrameTypeStopSending        FrameType = 0x05
	FrameTypeCrypto             FrameType = 0x06
	FrameTypeNewToken           FrameType = 0x07
	FrameTypeStream             FrameType = 0x08 // to 0x0f: OFF, LEN, FIN bits
	FrameTypeMaxData            FrameType = 0x10
	FrameTypeMaxStreamData      FrameType = 0x11
	FrameTypeMaxStreamsBidi     FrameType = 0x12
	FrameTypeMaxStreamsUni      FrameType = 0x13
	FrameTypeDataBlocked        FrameType = 0x14
	FrameTypeStreamDataBlocked  FrameType = 0x15
	FrameTypeStreamsBlockedBidi FrameType = 0x16
	FrameTypeStreamsBlockedUni  FrameType = 0x17
	FrameTypeNewConnectionID    FrameType = 0x18
	FrameTypeRetireConnectionID FrameType = 0x19
	FrameTypePathChallenge      FrameType = 0x1a
	FrameTypePathResponse       FrameType = 0x1b
	FrameTypeConnectionClose    FrameType = 0x1c // transport error
	FrameTypeConnectionCloseApp FrameType = 0x1d // application error
	FrameTypeHandshakeDone      FrameType = 0x1e
	FrameTypeDatagram           FrameType = 0x30 // extends to the end of the packet
	FrameTypeDatagramWithLen    FrameType = 0x31
	streamFrameTypeLast         FrameType = 0x0f
	streamFrameOffBit           FrameType = 0x04
	streamFrameLenBit           FrameType = 0x02
	streamFrameFinBit           FrameType = 0x01
	datagramFrameLenBit         FrameType = 0x01
	frameTypeNamesLast          FrameType = FrameTypeHandshakeDone
)

var frameTypeNames = [...]string{
	"PADDING", "PING", "ACK", "ACK_ECN", "RESET_STREAM", "STOP_SENDING",
	"CRYPTO", "NEW_TOKEN",
	"STREAM", "STREAM", "STREAM", "STREAM", "STREAM", "STREAM", "STREAM", "STREAM",
	"MAX_DATA", "MAX_STREAM_DATA", "MAX_STREAMS_BIDI", "MAX_STREAMS_UNI",
	"DATA_BLOCKED", "STREAM_DATA_BLOCKED", "STREAMS_BLOCKED_BIDI",
	"STREAMS_BLOCKED_UNI", "NEW_CONNECTION_ID", "RETIRE_CONNECTION_ID",
	"PATH_CHALLENGE", "PATH_RESPONSE", "CONNECTION_CLOSE",
	"CONNECTION_CLOSE_APP", "HANDSHAKE_DONE",
}

func (t FrameType) String() string {
	if t <= frameTypeNamesLast {
		return frameTypeNames[t]
	}
	if t.IsDatagram() {
		return "DATAGRAM"
	}
	if name := fecFrameName(t); name != "" {
		return name
	}
	if t == FrameTypeBDP {
		return "BDP"
	}
	if name := ackFrequencyFrameName(t); name != "" {
		return name
	}
	return fmt.Sprintf("FrameType(0x%x)", uint64(t))
}

// IsKnown reports whether t is defined by RFC 9000 or RFC 9221.
func (t FrameType) IsKnown() bool { return t <= frameTypeNamesLast || t.IsDatagram() }

// IsStream reports whether t is one of the eight STREAM frame types.
func (t FrameType) IsStream() bool { return t >= FrameTypeStream && t <= streamFrameTypeLast }

// IsAck reports whether t is ACK or ACK_ECN.
func (t FrameType) IsAck() bool { return t == FrameTypeAck || t == FrameTypeAckECN }

// IsDatagram reports whether t is one of the two DATAGRAM frame types.
func (t FrameType) IsDatagram() bool { return t == FrameTypeDatagram || t == FrameTypeDatagramWithLen }

// IsConnectionClose reports whether t is either CONNECTION_CLOSE type.
func (t FrameType) IsConnectionClose() bool {
	return t == FrameTypeConnectionClose || t == FrameTypeConnectionCloseApp
}

// IsAckEliciting reports whether a frame of type t makes its packet
// ack-eliciting: every frame but ACK, PADDING and CONNECTION_CLOSE (RFC
// 9000 section 13.2 and table 3, column "N"). DATAGRAM frames are
// ack-eliciting (RFC 9221 section 5.2).
func (t FrameType) IsAckEliciting() bool {
	return !t.IsAck() && t != FrameTypePadding && !t.IsConnectionClose() && t != FrameTypeFECRecovered
}

// CountsInFlight reports whether a frame of type t makes its packet count
// toward bytes in flight: packets of ACK frames alone do not (RFC 9000
// table 3, column "C"; RFC 9002 section 2).
func (t FrameType) CountsInFlight() bool { return !t.IsAck() && t != FrameTypeFECRecovered }

// IsProbing reports whether t is a probing frame: a packet of probing
// frames only does not migrate the connection (RFC 9000 section 9.1 and
// table 3, column "P"). PADDING counts as probing.
func (t FrameType) IsProbing() bool {
	switch t {
	case FrameTypePadding, FrameTypeNewConnectionID, FrameTypePathChallenge, FrameTypePathResponse:
		return true
	}
	return false
}

// IsFlowControlled reports whether the contents of a frame of type t count
// against flow control (RFC 9000 table 3, column "F").
func (t FrameType) IsFlowControlled() bool { return t.IsStream() }

// AllowedIn reports whether a frame of type t may appear in a packet of
// type pt (RFC 9000 table 3, column "Pkts", and section 12.5; RFC 9221
// section 4 for DATAGRAM). Every known frame may appear in 1-RTT packets,
// and the FEC and ACK frequency frames only there (draft-ietf-quic-ack-frequency
// section 3); the BDP frame in 1-RTT and 0-RTT packets, where a client
// returns it at once.
func (t FrameType) AllowedIn(pt PacketType) bool {
	if t == FrameTypeBDP {
		return pt == PacketType1RTT || pt == PacketType0RTT
	}
	switch pt {
	case PacketType1RTT:
		return t.IsKnown() || t.IsFEC() || t.IsAckFrequency()
	case PacketTypeInitial, PacketTypeHandshake:
		return t == FrameTypePadding || t == FrameTypePing || t.IsAck() ||
			t == FrameTypeCrypto || t == FrameTypeConnectionClose
	case PacketType0RTT:
		return t.IsKnown() && !t.IsAck() && t != FrameTypeCrypto && t != FrameTypeNewToken &&
			t != FrameTypePathResponse && t != FrameTypeHandshakeDone
	}
	return false
}

// CheckFrameAllowed returns the PROTOCOL_VIOLATION that RFC 9000 section
// 12.4 requires when a frame of type t arrives in a packet of type pt,
// or nil if it may.
func CheckFrameAllowed(t FrameType, pt PacketType) error {
	if t.AllowedIn(pt) {
		return nil
	}
	return frameError(t, CodeProtocolViolation, "%v frame not allowed in %v packet", t, pt)
}
