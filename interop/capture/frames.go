package capture

// The frames the analysis reads: CRYPTO data (the TLS handshake), the
// ECN counts of ACK frames, and the data of path validation. The rest are walked over, and a frame type it
// does not know ends the walk, since only the frame knows its length.
const (
	framePadding     = 0x00
	framePing        = 0x01
	frameAck         = 0x02
	frameAckECN      = 0x03
	frameResetStream = 0x04
	frameStopSending = 0x05
	frameCrypto      = 0x06
	frameNewToken    = 0x07
	frameStreamFirst = 0x08
	frameStreamLast  = 0x0f
	frameMaxData     = 0x10
	frameMaxStream   = 0x11
	frameMaxStreams  = 0x12 // and 0x13
	frameDataBlocked = 0x14
	frameStreamBlock = 0x15
	frameStreamsBlk  = 0x16 // and 0x17
	frameNewCID      = 0x18
	frameRetireCID   = 0x19
	framePathChall   = 0x1a
	framePathResp    = 0x1b
	frameCloseQUIC   = 0x1c
	frameCloseApp    = 0x1d
	frameHSDone      = 0x1e
	frameDatagram    = 0x30 // and 0x31
	// satquic's FEC extension: FEC_SOURCE_ID (a sequence number) opens a
	// source packet; FEC_REPAIR runs to the end of its packet.
	frameFECSourceID = 0x3fe0
	frameFECRepair   = 0x3fe1
)

// cryptoFrame is the data of a CRYPTO frame.
type cryptoFrame struct {
	offset uint64
	data   []byte
}

// frameSummary is what a packet's payload holds for the checks.
type frameSummary struct {
	crypto []cryptoFrame
	// ackECN: an ACK frame with ECN counts.
	ackECN bool
	// padding counts the PADDING frames, a byte each.
	padding int
	// ping: a PING frame; other: a frame neither PING nor PADDING.
	ping, other bool
	// challenges and responses are the data of PATH_CHALLENGE and
	// PATH_RESPONSE frames.
	challenges, responses [][8]byte
	// complete: every frame was walked (none unknown, none cut short).
	complete bool
}

// walkFrames reads a decrypted payload.
func walkFrames(b []byte) frameSummary {
	var s frameSummary
	for len(b) > 0 {
		typ, n, ok := readVarint(b)
		if !ok {
			return s
		}
		b = b[n:]
		s.ping = s.ping || typ == framePing
		s.other = s.other || (typ != framePing && typ != framePadding)
		skip := 0 // the frame's varint fields, for frames of nothing else
		switch {
		case typ == framePadding:
			s.padding++
			continue
		case typ == framePing, typ == frameHSDone:
			continue
		case typ == frameAck || typ == frameAckECN:
			rest, ok := skipAck(b, typ == frameAckECN)
			if !ok {
				return s
			}
			s.ackECN = s.ackECN || typ == frameAckECN
			b = rest
			continue
		case typ == frameCrypto:
			off, k1, ok1 := readVarint(b)
			if !ok1 {
				return s
			}
			ln, k2, ok2 := readVarint(b[k1:])
			if !ok2 || uint64(len(b)-k1-k2) < ln {
				return s
			}
			start := k1 + k2
			s.crypto = append(s.crypto, cryptoFrame{off, b[start : start+int(ln)]})
			b = b[start+int(ln):]
			continue
		case typ >= frameStreamFirst && typ <= frameStreamLast:
			rest, ok := skipStream(b, typ)
			if !ok {
				return s
			}
			b = rest
			continue
		case typ == frameResetStream:
			skip = 3
		case typ == frameStopSending, typ == frameMaxStream, typ == frameStreamBlock:
			skip = 2
		case typ == frameMaxData, typ == frameMaxStreams, typ == frameMaxStreams+1,
			typ == frameDataBlocked, typ == frameStreamsBlk, typ == frameStreamsBlk+1, typ == frameRetireCID,
			typ == frameFECSourceID:
			skip = 1
		case typ == frameFECRepair:
			b = nil
			continue
		case typ == frameNewToken:
			rest, ok := skipPrefixed(b)
			if !ok {
				return s
			}
			b = rest
			continue
		case typ == frameNewCID:
			rest, ok := skipNewCID(b)
			if !ok {
				return s
			}
			b = rest
			continue
		case typ == framePathChall, typ == framePathResp:
			if len(b) < 8 {
				return s
			}
			if typ == framePathChall {
				s.challenges = append(s.challenges, [8]byte(b[:8]))
			} else {
				s.responses = append(s.responses, [8]byte(b[:8]))
			}
			b = b[8:]
			continue
		case typ == frameCloseQUIC, typ == frameCloseApp:
			k := 1
			if typ == frameCloseQUIC {
				k = 2
			}
			rest, ok := skipVarints(b, k)
			if ok {
				rest, ok = skipPrefixed(rest)
			}
			if !ok {
				return s
			}
			b = rest
			continue
		case typ == frameDatagram || typ == frameDatagram+1:
			if typ == frameDatagram {
				b = nil
				continue
			}
			rest, ok := skipPrefixed(b)
			if !ok {
				return s
			}
			b = rest
			continue
		default:
			return s
		}
		rest, ok := skipVarints(b, skip)
		if !ok {
			return s
		}
		b = rest
	}
	s.complete = true
	return s
}

func skipVarints(b []byte, n int) ([]byte, bool) {
	for range n {
		_, k, ok := readVarint(b)
		if !ok {
			return nil, false
		}
		b = b[k:]
	}
	return b, true
}

// skipPrefixed skips a varint length and that many bytes.
func skipPrefixed(b []byte) ([]byte, bool) {
	n, k, ok := readVarint(b)
	if !ok || uint64(len(b)-k) < n {
		return nil, false
	}
	return b[k+int(n):], true
}

func skipAck(b []byte, ecn bool) ([]byte, bool) {
	b, ok := skipVarints(b, 2) // largest acknowledged, delay
	if !ok {
		return nil, false
	}
	ranges, k, ok := readVarint(b)
	if !ok || ranges > uint64(len(b)) {
		return nil, false
	}
	b, ok = skipVarints(b[k:], 1+2*int(ranges))
	if ok && ecn {
		b, ok = skipVarints(b, 3)
	}
	return b, ok
}

func skipStream(b []byte, typ uint64) ([]byte, bool) {
	b, ok := skipVarints(b, 1) // stream ID
	if ok && typ&0x04 != 0 {
		b, ok = skipVarints(b, 1) // offset
	}
	if !ok {
		return nil, false
	}
	if typ&0x02 == 0 {
		return nil, true // the data runs to the end of the packet
	}
	return skipPrefixed(b)
}

func skipNewCID(b []byte) ([]byte, bool) {
	b, ok := skipVarints(b, 2) // sequence number, retire prior to
	if !ok || len(b) < 1 {
		return nil, false
	}
	n := int(b[0])
	if len(b) < 1+n+16 {
		return nil, false
	}
	return b[1+n+16:], true
}
