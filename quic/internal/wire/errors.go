package wire

import "fmt"

// Transport error codes (RFC 9000 section 20.1), carried by
// CONNECTION_CLOSE frames of type 0x1c.
const (
	CodeNoError                 uint64 = 0x00
	CodeInternalError           uint64 = 0x01
	CodeConnectionRefused       uint64 = 0x02
	CodeFlowControlError        uint64 = 0x03
	CodeStreamLimitError        uint64 = 0x04
	CodeStreamStateError        uint64 = 0x05
	CodeFinalSizeError          uint64 = 0x06
	CodeFrameEncodingError      uint64 = 0x07
	CodeTransportParameterError uint64 = 0x08
	CodeConnectionIDLimitError  uint64 = 0x09
	CodeProtocolViolation       uint64 = 0x0a
	CodeInvalidToken            uint64 = 0x0b
	CodeApplicationError        uint64 = 0x0c
	CodeCryptoBufferExceeded    uint64 = 0x0d
	CodeKeyUpdateError          uint64 = 0x0e
	CodeAEADLimitReached        uint64 = 0x0f
	CodeNoViablePath            uint64 = 0x10
	// CodeVersionNegotiationError is defined by RFC 9368 section 10.2.
	CodeVersionNegotiationError uint64 = 0x11
	// CodeCryptoErrorBase is the first of the 256 codes 0x0100-0x01ff that
	// carry a TLS alert (RFC 9000 section 20.1, RFC 9001 section 4.8).
	CodeCryptoErrorBase uint64 = 0x0100
)

var transportErrorNames = [...]string{
	"NO_ERROR", "INTERNAL_ERROR", "CONNECTION_REFUSED", "FLOW_CONTROL_ERROR",
	"STREAM_LIMIT_ERROR", "STREAM_STATE_ERROR", "FINAL_SIZE_ERROR",
	"FRAME_ENCODING_ERROR", "TRANSPORT_PARAMETER_ERROR",
	"CONNECTION_ID_LIMIT_ERROR", "PROTOCOL_VIOLATION", "INVALID_TOKEN",
	"APPLICATION_ERROR", "CRYPTO_BUFFER_EXCEEDED", "KEY_UPDATE_ERROR",
	"AEAD_LIMIT_REACHED", "NO_VIABLE_PATH", "VERSION_NEGOTIATION_ERROR",
}

// CryptoErrorCode returns the transport error code that carries a TLS
// alert (RFC 9001 section 4.8).
func CryptoErrorCode(alert uint8) uint64 {
	return CodeCryptoErrorBase + uint64(alert)
}

// TransportErrorName returns the RFC name of a transport error code, or a
// hexadecimal form for codes it does not know.
func TransportErrorName(code uint64) string {
	if code < uint64(len(transportErrorNames)) {
		return transportErrorNames[code]
	}
	if code >= CodeCryptoErrorBase && code <= CodeCryptoErrorBase+0xff {
		return fmt.Sprintf("CRYPTO_ERROR(0x%02x)", code-CodeCryptoErrorBase)
	}
	return fmt.Sprintf("0x%x", code)
}

// TransportError is a connection error the receiver of malformed input
// must close the connection with (RFC 9000 section 11.1). Code is a
// transport error code (section 20.1); FrameType is the type of the frame
// that caused it, 0 when no frame did (e.g. a transport parameter), as the
// CONNECTION_CLOSE frame reports it (section 19.19).
type TransportError struct {
	Code      uint64
	FrameType uint64
	Reason    string
}

func (e *TransportError) Error() string {
	if e.FrameType != 0 {
		return fmt.Sprintf("quic: %s in frame 0x%x: %s", TransportErrorName(e.Code), e.FrameType, e.Reason)
	}
	return fmt.Sprintf("quic: %s: %s", TransportErrorName(e.Code), e.Reason)
}

// frameError builds the TransportError for a frame of type t.
func frameError(t FrameType, code uint64, format string, args ...any) *TransportError {
	return &TransportError{Code: code, FrameType: uint64(t), Reason: fmt.Sprintf(format, args...)}
}

// truncatedFrame is the error for a frame that runs past the end of the
// packet payload (RFC 9000 section 12.4: frames cannot span packets).
func truncatedFrame(t FrameType) *TransportError {
	return frameError(t, CodeFrameEncodingError, "%v frame truncated", t)
}

// transportParameterError builds a TRANSPORT_PARAMETER_ERROR (RFC 9000
// section 7.4).
func transportParameterError(format string, args ...any) *TransportError {
	return &TransportError{Code: CodeTransportParameterError, Reason: fmt.Sprintf(format, args...)}
}
