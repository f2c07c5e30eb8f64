package wire

// DatagramFrame carries an unreliable application datagram (RFC 9221
// section 4). Data aliases the parsed packet payload.
type DatagramFrame struct {
	Data []byte
	// DataLenPresent writes the Length field (type 0x31). Without it the
	// data runs to the end of the packet (type 0x30).
	DataLenPresent bool
}

func (f *DatagramFrame) Type() FrameType {
	if f.DataLenPresent {
		return FrameTypeDatagramWithLen
	}
	return FrameTypeDatagram
}

func (f *DatagramFrame) Len() int {
	n := 1 + len(f.Data)
	if f.DataLenPresent {
		n += VarintLen(uint64(len(f.Data)))
	}
	return n
}

func (f *DatagramFrame) Append(b []byte) ([]byte, error) {
	b = append(b, byte(f.Type()))
	if f.DataLenPresent {
		b = appendVarint(b, uint64(len(f.Data)))
	}
	return append(b, f.Data...), nil
}

func (f *DatagramFrame) decode(t FrameType, c *cursor) error {
	f.DataLenPresent = t == FrameTypeDatagramWithLen
	if f.DataLenPresent {
		f.Data = c.bytes(c.varint())
	} else {
		f.Data = c.rest()
	}
	if c.short {
		return truncatedFrame(t)
	}
	f.Data = nilIfEmpty(f.Data)
	return nil
}

// MaxDatagramDataLen returns how many bytes of datagram payload fit in a
// DATAGRAM frame of budget bytes; ok is false when not even an empty frame
// fits.
func MaxDatagramDataLen(budget int, withLen bool) (n int, ok bool) {
	return maxDataLen(budget, 1, withLen)
}
