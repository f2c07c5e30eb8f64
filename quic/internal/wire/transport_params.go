package wire

import (
	"fmt"
	"time"
)

// Perspective says which endpoint sent a set of transport parameters; some
// parameters only a server may send (RFC 9000 section 18.2).
type Perspective uint8

const (
	PerspectiveClient Perspective = iota + 1
	PerspectiveServer
)

func (p Perspective) String() string {
	switch p {
	case PerspectiveClient:
		return "client"
	case PerspectiveServer:
		return "server"
	}
	return fmt.Sprintf("Perspective(%d)", uint8(p))
}

// Transport parameter IDs (RFC 9000 section 18.2, RFC 9368 section 3, RFC
// 9221 section 3).
const (
	paramOriginalDestinationConnectionID uint64 = 0x00
	paramMaxIdleTimeout                  uint64 = 0x01
	paramStatelessResetToken             uint64 = 0x02
	paramMaxUDPPayloadSize               uint64 = 0x03
	paramInitialMaxData                  uint64 = 0x04
	paramInitialMaxStreamDataBidiLocal   uint64 = 0x05
	paramInitialMaxStreamDataBidiRemote  uint64 = 0x06
	paramInitialMaxStreamDataUni         uint64 = 0x07
	paramInitialMaxStreamsBidi           uint64 = 0x08
	paramInitialMaxStreamsUni            uint64 = 0x09
	paramAckDelayExponent                uint64 = 0x0a
	paramMaxAckDelay                     uint64 = 0x0b
	paramDisableActiveMigration          uint64 = 0x0c
	paramPreferredAddress                uint64 = 0x0d
	paramActiveConnectionIDLimit         uint64 = 0x0e
	paramInitialSourceConnectionID       uint64 = 0x0f
	paramRetrySourceConnectionID         uint64 = 0x10
	paramVersionInformation              uint64 = 0x11
	paramMaxDatagramFrameSize            uint64 = 0x20
)

// Defaults of parameters that are not 0 when absent (RFC 9000 section
// 18.2).
const (
	DefaultMaxUDPPayloadSize       = 65527
	DefaultAckDelayExponent        = 3
	DefaultMaxAckDelayMs           = 25
	DefaultActiveConnectionIDLimit = 2
)

// Validity limits of RFC 9000 sections 18.2 and 4.6.
const (
	MinMaxUDPPayloadSize       = 1200
	MaxAckDelayExponent        = 20
	MaxMaxAckDelayMs           = 1<<14 - 1
	MinActiveConnectionIDLimit = 2
	MaxStreamsLimit            = maxStreamsLimit
)

// IsKnownTransportParameter reports whether id is a parameter that
// TransportParameters has a field for.
func IsKnownTransportParameter(id uint64) bool {
	return id <= paramVersionInformation || id == paramMaxDatagramFrameSize
}

// IsReservedTransportParameter reports whether id has the form 31*N+27
// that RFC 9000 section 18.1 reserves for greasing.
func IsReservedTransportParameter(id uint64) bool { return id%31 == 27 }

// TransportParameters holds the transport parameters an endpoint sends in
// its TLS handshake (RFC 9000 section 18). Integer fields hold the value
// in force, defaults included: start from DefaultTransportParameters. A
// nil pointer is an absent parameter.
type TransportParameters struct {
	OriginalDestinationConnectionID *ConnectionID
	MaxIdleTimeoutMs                uint64
	StatelessResetToken             *StatelessResetToken
	MaxUDPPayloadSize               uint64
	InitialMaxData                  uint64
	InitialMaxStreamDataBidiLocal   uint64
	InitialMaxStreamDataBidiRemote  uint64
	InitialMaxStreamDataUni         uint64
	InitialMaxStreamsBidi           uint64
	InitialMaxStreamsUni            uint64
	AckDelayExponent                uint64
	MaxAckDelayMs                   uint64
	DisableActiveMigration          bool
	PreferredAddress                *PreferredAddress
	ActiveConnectionIDLimit         uint64
	InitialSourceConnectionID       *ConnectionID
	RetrySourceConnectionID         *ConnectionID
	VersionInformation              *VersionInformation
	// MaxDatagramFrameSize enables DATAGRAM frames when non-zero (RFC 9221
	// section 3).
	MaxDatagramFrameSize uint64
	// Extensions holds parameters this package does not define, by ID,
	// such as satquic's FEC negotiation. Reserved (GREASE) parameters are
	// skipped when parsing. Values are copies of the received bytes.
	Extensions map[uint64][]byte
}

// DefaultTransportParameters returns the parameters an endpoint has when
// it sends none: every integer at its RFC 9000 default.
func DefaultTransportParameters() TransportParameters {
	return TransportParameters{
		MaxUDPPayloadSize:       DefaultMaxUDPPayloadSize,
		AckDelayExponent:        DefaultAckDelayExponent,
		MaxAckDelayMs:           DefaultMaxAckDelayMs,
		ActiveConnectionIDLimit: DefaultActiveConnectionIDLimit,
	}
}

// MaxIdleTimeout returns max_idle_timeout as a duration; 0 means no
// timeout from this endpoint.
func (p *TransportParameters) MaxIdleTimeout() time.Duration {
	return millis(p.MaxIdleTimeoutMs)
}

// MaxAckDelay returns max_ack_delay as a duration.
func (p *TransportParameters) MaxAckDelay() time.Duration {
	return millis(p.MaxAckDelayMs)
}

func millis(ms uint64) time.Duration {
	const maxMs = uint64(1<<63-1) / uint64(time.Millisecond)
	return time.Duration(min(ms, maxMs)) * time.Millisecond
}
