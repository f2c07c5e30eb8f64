package http3

import (
	"errors"
	"fmt"

	"github.com/satquic/satquic/quic"
)

// ErrCode is an HTTP/3 error code (RFC 9114 section 8.1, RFC 9204
// section 6), carried by CONNECTION_CLOSE, RESET_STREAM and STOP_SENDING.
type ErrCode uint64

// The error codes of RFC 9114 section 8.1, RFC 9204 section 6 and RFC
// 9297 section 2.1.
const (
	ErrCodeNoError              ErrCode = 0x100
	ErrCodeGeneralProtocolError ErrCode = 0x101
	ErrCodeInternalError        ErrCode = 0x102
	ErrCodeStreamCreationError  ErrCode = 0x103
	ErrCodeClosedCriticalStream ErrCode = 0x104
	ErrCodeFrameUnexpected      ErrCode = 0x105
	ErrCodeFrameError           ErrCode = 0x106
	ErrCodeExcessiveLoad        ErrCode = 0x107
	ErrCodeIDError              ErrCode = 0x108
	ErrCodeSettingsError        ErrCode = 0x109
	ErrCodeMissingSettings      ErrCode = 0x10a
	ErrCodeRequestRejected      ErrCode = 0x10b
	ErrCodeRequestCancelled     ErrCode = 0x10c
	ErrCodeRequestIncomplete    ErrCode = 0x10d
	ErrCodeMessageError         ErrCode = 0x10e
	ErrCodeConnectError         ErrCode = 0x10f
	ErrCodeVersionFallback      ErrCode = 0x110
	// ErrCodeDatagramError is H3_DATAGRAM_ERROR: a malformed HTTP/3
	// datagram (RFC 9297 section 2.1).
	ErrCodeDatagramError ErrCode = 0x33

	ErrCodeQPACKDecompressionFailed ErrCode = 0x200
	ErrCodeQPACKEncoderStreamError  ErrCode = 0x201
	ErrCodeQPACKDecoderStreamError  ErrCode = 0x202
)

var errCodeNames = map[ErrCode]string{
	ErrCodeNoError:                  "H3_NO_ERROR",
	ErrCodeGeneralProtocolError:     "H3_GENERAL_PROTOCOL_ERROR",
	ErrCodeInternalError:            "H3_INTERNAL_ERROR",
	ErrCodeStreamCreationError:      "H3_STREAM_CREATION_ERROR",
	ErrCodeClosedCriticalStream:     "H3_CLOSED_CRITICAL_STREAM",
	ErrCodeFrameUnexpected:          "H3_FRAME_UNEXPECTED",
	ErrCodeFrameError:               "H3_FRAME_ERROR",
	ErrCodeExcessiveLoad:            "H3_EXCESSIVE_LOAD",
	ErrCodeIDError:                  "H3_ID_ERROR",
	ErrCodeSettingsError:            "H3_SETTINGS_ERROR",
	ErrCodeMissingSettings:          "H3_MISSING_SETTINGS",
	ErrCodeRequestRejected:          "H3_REQUEST_REJECTED",
	ErrCodeRequestCancelled:         "H3_REQUEST_CANCELLED",
	ErrCodeRequestIncomplete:        "H3_REQUEST_INCOMPLETE",
	ErrCodeMessageError:             "H3_MESSAGE_ERROR",
	ErrCodeConnectError:             "H3_CONNECT_ERROR",
	ErrCodeVersionFallback:          "H3_VERSION_FALLBACK",
	ErrCodeDatagramError:            "H3_DATAGRAM_ERROR",
	ErrCodeQPACKDecompressionFailed: "QPACK_DECOMPRESSION_FAILED",
	ErrCodeQPACKEncoderStreamError:  "QPACK_ENCODER_STREAM_ERROR",
	ErrCodeQPACKDecoderStreamError:  "QPACK_DECODER_STREAM_ERROR",
}

// String names the code as the RFCs do, for example "H3_FRAME_ERROR".
func (c ErrCode) String() string {
	if s, ok := errCodeNames[c]; ok {
		return s
	}
	// Codes of the form 0x1f * N + 0x21 are reserved to exercise the
	// handling of unknown codes (RFC 9114 section 8.1).
	return fmt.Sprintf("H3 error %#x", uint64(c))
}

// Error is an HTTP/3 error: a connection (Connection) or a single request
// stream ended with an HTTP/3 error code, found by this endpoint or
// reported by the peer (Remote).
type Error struct {
	Code       ErrCode
	Remote     bool
	Connection bool
	Message    string
}

func (e *Error) Error() string {
	who := "local"
	if e.Remote {
		who = "remote"
	}
	what := "stream"
	if e.Connection {
		what = "connection"
	}
	if e.Message == "" {
		return fmt.Sprintf("http3: %s %s error %s", who, what, e.Code)
	}
	return fmt.Sprintf("http3: %s %s error %s: %s", who, what, e.Code, e.Message)
}

// connError is a connection error found by this endpoint: the connection
// closes with its code (RFC 9114 section 8).
func connError(code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Connection: true, Message: fmt.Sprintf(format, args...)}
}

// streamError is a stream error found by this endpoint: the stream is
// reset with its code.
func streamError(code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// fromQUIC translates the errors of the quic package that carry an
// HTTP/3 code into an *Error; others are returned unchanged.
func fromQUIC(err error) error {
	var se *quic.StreamError
	if errors.As(err, &se) {
		return &Error{Code: ErrCode(se.ErrorCode), Remote: se.Remote}
	}
	var ae *quic.ApplicationError
	if errors.As(err, &ae) {
		return &Error{Code: ErrCode(ae.ErrorCode), Remote: ae.Remote, Connection: true, Message: ae.ErrorMessage}
	}
	return err
}

// asH3 returns err's *Error, if it has one.
func asH3(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
