package wire

import (
	"errors"
	"fmt"
)

// Version is a QUIC version number (RFC 9000 section 15).
type Version uint32

const (
	// VersionNegotiationVersion is the version field of a Version
	// Negotiation packet (RFC 9000 section 17.2.1).
	VersionNegotiationVersion Version = 0
	// Version1 is QUIC version 1 (RFC 9000).
	Version1 Version = 0x00000001
	// Version2 is QUIC version 2 (RFC 9369 section 3.1).
	Version2 Version = 0x6b3343cf
)

// ErrUnsupportedVersion reports a long header whose version this package
// cannot parse beyond the version-independent fields (RFC 8999).
var ErrUnsupportedVersion = errors.New("quic wire: unsupported version")

// IsSupported reports whether the package parses and writes packets of
// version v.
func (v Version) IsSupported() bool { return v == Version1 || v == Version2 }

// IsReserved reports whether v follows the pattern 0x?a?a?a?a that RFC 9000
// section 15 reserves to exercise version negotiation.
func (v Version) IsReserved() bool { return v&0x0f0f0f0f == 0x0a0a0a0a }

func (v Version) String() string {
	switch v {
	case VersionNegotiationVersion:
		return "negotiation"
	case Version1:
		return "v1"
	case Version2:
		return "v2"
	}
	return fmt.Sprintf("0x%08x", uint32(v))
}
