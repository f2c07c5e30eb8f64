package wire

// PathChallengeFrame probes a path (RFC 9000 section 19.17).
type PathChallengeFrame struct {
	Data [8]byte
}

func (f *PathChallengeFrame) Type() FrameType { return FrameTypePathChallenge }
func (f *PathChallengeFrame) Len() int        { return 1 + len(f.Data) }

func (f *PathChallengeFrame) Append(b []byte) ([]byte, error) {
	return append(append(b, byte(FrameTypePathChallenge)), f.Data[:]...), nil
}

func (f *PathChallengeFrame) decode(t FrameType, c *cursor) error {
	return decodePathData(t, c, &f.Data)
}

// PathResponseFrame answers a PATH_CHALLENGE with its data (RFC 9000
// section 19.18).
type PathResponseFrame struct {
	Data [8]byte
}

func (f *PathResponseFrame) Type() FrameType { return FrameTypePathResponse }
func (f *PathResponseFrame) Len() int        { return 1 + len(f.Data) }

func (f *PathResponseFrame) Append(b []byte) ([]byte, error) {
	return append(append(b, byte(FrameTypePathResponse)), f.Data[:]...), nil
}

func (f *PathResponseFrame) decode(t FrameType, c *cursor) error {
	return decodePathData(t, c, &f.Data)
}

func decodePathData(t FrameType, c *cursor, data *[8]byte) error {
	raw := c.bytes(uint64(len(data)))
	if c.short {
		return truncatedFrame(t)
	}
	copy(data[:], raw)
	return nil
}
