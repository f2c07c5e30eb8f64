package http3

// Setting identifiers (RFC 9114 section 7.2.4.1, RFC 9204 section 5,
// RFC 9220 section 3, RFC 9297 section 2.1.1).
const (
	settingQPACKMaxTableCapacity = 0x01
	settingMaxFieldSectionSize   = 0x06
	settingQPACKBlockedStreams   = 0x07
	settingEnableConnectProtocol = 0x08
	settingH3Datagram            = 0x33
)

// settings are the values of a SETTINGS frame that this package uses;
// unknown settings are ignored (RFC 9114 section 7.2.4).
type settings struct {
	// maxFieldSectionSize is the largest field section the sender
	// accepts, if hasMaxFieldSectionSize; no limit otherwise.
	maxFieldSectionSize    uint64
	hasMaxFieldSectionSize bool
	// qpackMaxTableCapacity and qpackBlockedStreams stay zero for a
	// peer that offers no dynamic table: this endpoint then never uses
	// one for its encoder (RFC 9204 section 3.2.3).
	qpackMaxTableCapacity uint64
	qpackBlockedStreams   uint64
	enableConnectProtocol bool
	h3Datagram            bool
	// grease is a reserved identifier sent with a random-looking value,
	// so that peers keep ignoring unknown settings (section 7.2.4.1).
	grease uint64
}

// appendSettingsFrame appends the SETTINGS frame that announces s.
func appendSettingsFrame(b []byte, s settings) []byte {
	var p []byte
	if s.hasMaxFieldSectionSize {
		p = appendVarint(appendVarint(p, settingMaxFieldSectionSize), s.maxFieldSectionSize)
	}
	if s.qpackMaxTableCapacity > 0 {
		p = appendVarint(appendVarint(p, settingQPACKMaxTableCapacity), s.qpackMaxTableCapacity)
	}
	if s.qpackBlockedStreams > 0 {
		p = appendVarint(appendVarint(p, settingQPACKBlockedStreams), s.qpackBlockedStreams)
	}
	if s.enableConnectProtocol {
		p = appendVarint(appendVarint(p, settingEnableConnectProtocol), 1)
	}
	if s.h3Datagram {
		p = appendVarint(appendVarint(p, settingH3Datagram), 1)
	}
	if s.grease != 0 {
		p = appendVarint(appendVarint(p, s.grease), s.grease&0xffff)
	}
	b = appendFrameHeader(b, frameSettings, uint64(len(p)))
	return append(b, p...)
}

// parseSettings decodes a SETTINGS payload. A setting repeated, a
// setting HTTP/2 defined and HTTP/3 reserved, or a boolean setting
// outside 0 and 1 is an H3_SETTINGS_ERROR; a payload that ends inside a
// pair is an H3_FRAME_ERROR.
func parseSettings(p []byte) (settings, error) {
	var s settings
	seen := make(map[uint64]struct{}, 8)
	for len(p) > 0 {
		id, n := parseVarint(p)
		if n == 0 {
			return s, connError(ErrCodeFrameError, "SETTINGS payload ends inside an identifier")
		}
		p = p[n:]
		v, n := parseVarint(p)
		if n == 0 {
			return s, connError(ErrCodeFrameError, "SETTINGS payload ends inside a value")
		}
		p = p[n:]
		// RFC 9114 section 7.2.4: "The same setting identifier MUST NOT
		// occur more than once in the SETTINGS frame."
		if _, dup := seen[id]; dup {
			return s, connError(ErrCodeSettingsError, "setting %#x repeated", id)
		}
		seen[id] = struct{}{}
		switch id {
		case 0x02, 0x03, 0x04, 0x05:
			// HTTP/2's ENABLE_PUSH, MAX_CONCURRENT_STREAMS,
			// INITIAL_WINDOW_SIZE and MAX_FRAME_SIZE (section 7.2.4.1).
			return s, connError(ErrCodeSettingsError, "HTTP/2 setting %#x", id)
		case settingMaxFieldSectionSize:
			s.maxFieldSectionSize, s.hasMaxFieldSectionSize = v, true
		case settingQPACKMaxTableCapacity:
			s.qpackMaxTableCapacity = v
		case settingQPACKBlockedStreams:
			s.qpackBlockedStreams = v
		case settingEnableConnectProtocol, settingH3Datagram:
			if v > 1 {
				return s, connError(ErrCodeSettingsError, "setting %#x has value %d, not 0 or 1", id, v)
			}
			if id == settingEnableConnectProtocol {
				s.enableConnectProtocol = v == 1
			} else {
				s.h3Datagram = v == 1
			}
		}
	}
	return s, nil
}
