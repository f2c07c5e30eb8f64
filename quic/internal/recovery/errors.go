package recovery

import "errors"

// Errors returned by the Sender. They are wrapped with detail; test with
// errors.Is.
var (
	// ErrInvalidConfig reports a Config field out of range.
	ErrInvalidConfig = errors.New("recovery: invalid config")
	// ErrInvalidSpace reports a Space value that is not one of the three
	// packet number spaces.
	ErrInvalidSpace = errors.New("recovery: invalid packet number space")
	// ErrSpaceDiscarded reports use of a space whose keys were discarded.
	ErrSpaceDiscarded = errors.New("recovery: packet number space discarded")
	// ErrInvalidPacket reports a sent packet the Sender cannot track:
	// a packet number that does not increase, a jump too large, or a size
	// out of range.
	ErrInvalidPacket = errors.New("recovery: invalid sent packet")
	// ErrInvalidAck reports malformed acknowledgement ranges.
	ErrInvalidAck = errors.New("recovery: invalid acknowledgement ranges")
	// ErrAckOfUnsentPacket reports an acknowledgement of a packet number
	// that was never sent (never used, or deliberately skipped). RFC 9000
	// section 13.1 makes it a connection error of type PROTOCOL_VIOLATION.
	ErrAckOfUnsentPacket = errors.New("recovery: acknowledgement of a packet that was not sent")
	// ErrControllerPanic reports that a custom congestion controller
	// (Config.Custom) panicked: Sender.ControllerError returns it, and
	// the connection closes.
	ErrControllerPanic = errors.New("congestion controller panicked")
)
