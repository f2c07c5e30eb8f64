package wire

// ParseTransportParameters parses the quic_transport_parameters TLS
// extension sent by sender (RFC 9000 section 18). It consumes all of b, so
// it returns no length. Every error is a *TransportError of type
// TRANSPORT_PARAMETER_ERROR (RFC 9000 section 7.4): malformed or duplicate
// parameters, values outside their valid range, a server-only parameter
// from a client, or a required parameter missing. Reserved parameters are
// skipped; other unknown ones are kept in Extensions.
func ParseTransportParameters(b []byte, sender Perspective) (TransportParameters, error) {
	p := DefaultTransportParameters()
	if sender != PerspectiveClient && sender != PerspectiveServer {
		return p, transportParameterError("unknown sender %v", sender)
	}
	var seenKnown uint64          // bit i: known parameter i seen
	var seenOther map[uint64]bool // unknown and reserved IDs seen
	c := cursor{b: b}
	for c.remaining() > 0 {
		id := c.varint()
		value := c.bytes(c.varint())
		if c.short {
			return p, transportParameterError("truncated parameter list")
		}
		// RFC 9000 section 7.4: a parameter sent twice is an error.
		if IsKnownTransportParameter(id) {
			bit := uint64(1) << (id & 63)
			if seenKnown&bit != 0 {
				return p, transportParameterError("duplicate parameter 0x%x", id)
			}
			seenKnown |= bit
			if err := p.decodeKnown(id, value, sender); err != nil {
				return p, err
			}
			continue
		}
		if seenOther == nil {
			seenOther = make(map[uint64]bool)
		}
		if seenOther[id] {
			return p, transportParameterError("duplicate parameter 0x%x", id)
		}
		seenOther[id] = true
		if !IsReservedTransportParameter(id) {
			p.setExtension(id, value)
		}
	}
	return p, p.Validate(sender)
}

func (p *TransportParameters) setExtension(id uint64, value []byte) {
	if p.Extensions == nil {
		p.Extensions = make(map[uint64][]byte)
	}
	p.Extensions[id] = append([]byte{}, value...)
}

// decodeKnown decodes the value of a parameter TransportParameters has a
// field for.
func (p *TransportParameters) decodeKnown(id uint64, value []byte, sender Perspective) error {
	var err error
	switch id {
	case paramOriginalDestinationConnectionID:
		p.OriginalDestinationConnectionID, err = parseParamConnID(id, value)
	case paramInitialSourceConnectionID:
		p.InitialSourceConnectionID, err = parseParamConnID(id, value)
	case paramRetrySourceConnectionID:
		p.RetrySourceConnectionID, err = parseParamConnID(id, value)
	case paramStatelessResetToken:
		if len(value) != StatelessResetTokenLen {
			return transportParameterError("stateless_reset_token of %d bytes", len(value))
		}
		// Copied so that the token does not alias the input.
		token := StatelessResetToken(value)
		p.StatelessResetToken = &token
	case paramDisableActiveMigration:
		if len(value) != 0 {
			return transportParameterError("disable_active_migration with a %d-byte value", len(value))
		}
		p.DisableActiveMigration = true
	case paramPreferredAddress:
		p.PreferredAddress, err = parsePreferredAddress(value)
	case paramVersionInformation:
		p.VersionInformation, err = parseVersionInformation(value, sender)
	default:
		field := p.integerField(id)
		*field, err = parseParamVarint(id, value)
	}
	return err
}

// integerField returns the field of an integer parameter.
func (p *TransportParameters) integerField(id uint64) *uint64 {
	switch id {
	case paramMaxIdleTimeout:
		return &p.MaxIdleTimeoutMs
	case paramMaxUDPPayloadSize:
		return &p.MaxUDPPayloadSize
	case paramInitialMaxData:
		return &p.InitialMaxData
	case paramInitialMaxStreamDataBidiLocal:
		return &p.InitialMaxStreamDataBidiLocal
	case paramInitialMaxStreamDataBidiRemote:
		return &p.InitialMaxStreamDataBidiRemote
	case paramInitialMaxStreamDataUni:
		return &p.InitialMaxStreamDataUni
	case paramInitialMaxStreamsBidi:
		return &p.InitialMaxStreamsBidi
	case paramInitialMaxStreamsUni:
		return &p.InitialMaxStreamsUni
	case paramAckDelayExponent:
		return &p.AckDelayExponent
	case paramMaxAckDelay:
		return &p.MaxAckDelayMs
	case paramActiveConnectionIDLimit:
		return &p.ActiveConnectionIDLimit
	case paramMaxDatagramFrameSize:
		return &p.MaxDatagramFrameSize
	}
	return nil
}

// parseParamVarint decodes an integer parameter: one varint filling the
// whole value (RFC 9000 section 18.2).
func parseParamVarint(id uint64, value []byte) (uint64, error) {
	v, n, err := ParseVarint(value)
	if err != nil || n != len(value) {
		return 0, transportParameterError("parameter 0x%x: %d bytes are not one integer", id, len(value))
	}
	return v, nil
}

func parseParamConnID(id uint64, value []byte) (*ConnectionID, error) {
	c, err := NewConnectionID(value)
	if err != nil {
		return nil, transportParameterError("parameter 0x%x: connection ID of %d bytes", id, len(value))
	}
	return &c, nil
}
