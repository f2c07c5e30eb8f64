package recovery

// Space is a packet number space (RFC 9000 section 12.3). Each space has
// its own packet numbers, acknowledgements and loss detection state; RTT
// estimation and congestion control are shared by all three (RFC 9002
// section 3).
type Space uint8

const (
	SpaceInitial Space = iota
	SpaceHandshake
	// SpaceApplication carries 0-RTT and 1-RTT packets, which share one
	// packet number space.
	SpaceApplication

	numSpaces = 3
)

func (s Space) String() string {
	switch s {
	case SpaceInitial:
		return "initial"
	case SpaceHandshake:
		return "handshake"
	case SpaceApplication:
		return "application"
	}
	return "invalid"
}

func (s Space) valid() bool { return s < numSpaces }
