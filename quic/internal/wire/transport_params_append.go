package wire

import "slices"

// Append appends the parameters as the body of the
// quic_transport_parameters TLS extension sent by sender. Integer
// parameters equal to their default are left out, since an absent
// parameter means its default. Extensions follow in ascending ID order. It
// fails, appending nothing, if Validate fails.
func (p *TransportParameters) Append(b []byte, sender Perspective) ([]byte, error) {
	if err := p.Validate(sender); err != nil {
		return b, err
	}
	b = appendParamConnID(b, paramOriginalDestinationConnectionID, p.OriginalDestinationConnectionID)
	b = appendParamInt(b, paramMaxIdleTimeout, p.MaxIdleTimeoutMs, 0)
	if p.StatelessResetToken != nil {
		b = appendParam(b, paramStatelessResetToken, p.StatelessResetToken[:])
	}
	b = appendParamInt(b, paramMaxUDPPayloadSize, p.MaxUDPPayloadSize, DefaultMaxUDPPayloadSize)
	b = appendParamInt(b, paramInitialMaxData, p.InitialMaxData, 0)
	b = appendParamInt(b, paramInitialMaxStreamDataBidiLocal, p.InitialMaxStreamDataBidiLocal, 0)
	b = appendParamInt(b, paramInitialMaxStreamDataBidiRemote, p.InitialMaxStreamDataBidiRemote, 0)
	b = appendParamInt(b, paramInitialMaxStreamDataUni, p.InitialMaxStreamDataUni, 0)
	b = appendParamInt(b, paramInitialMaxStreamsBidi, p.InitialMaxStreamsBidi, 0)
	b = appendParamInt(b, paramInitialMaxStreamsUni, p.InitialMaxStreamsUni, 0)
	b = appendParamInt(b, paramAckDelayExponent, p.AckDelayExponent, DefaultAckDelayExponent)
	b = appendParamInt(b, paramMaxAckDelay, p.MaxAckDelayMs, DefaultMaxAckDelayMs)
	if p.DisableActiveMigration {
		b = appendParam(b, paramDisableActiveMigration, nil)
	}
	if p.PreferredAddress != nil {
		b = appendParam(b, paramPreferredAddress, p.PreferredAddress.append(nil))
	}
	b = appendParamInt(b, paramActiveConnectionIDLimit, p.ActiveConnectionIDLimit, DefaultActiveConnectionIDLimit)
	b = appendParamConnID(b, paramInitialSourceConnectionID, p.InitialSourceConnectionID)
	b = appendParamConnID(b, paramRetrySourceConnectionID, p.RetrySourceConnectionID)
	if p.VersionInformation != nil {
		b = appendParam(b, paramVersionInformation, p.VersionInformation.append(nil))
	}
	b = appendParamInt(b, paramMaxDatagramFrameSize, p.MaxDatagramFrameSize, 0)
	ids := make([]uint64, 0, len(p.Extensions))
	for id := range p.Extensions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b = appendParam(b, id, p.Extensions[id])
	}
	return b, nil
}

// appendParam appends one parameter; Validate has checked that the ID and
// length are encodable.
func appendParam(b []byte, id uint64, value []byte) []byte {
	b = appendVarint(b, id)
	b = appendVarint(b, uint64(len(value)))
	return append(b, value...)
}

func appendParamInt(b []byte, id, v, def uint64) []byte {
	if v == def {
		return b
	}
	b = appendVarint(b, id)
	b = appendVarint(b, uint64(VarintLen(v)))
	return appendVarint(b, v)
}

func appendParamConnID(b []byte, id uint64, c *ConnectionID) []byte {
	if c == nil {
		return b
	}
	b = appendVarint(b, id)
	b = appendVarint(b, uint64(c.Len()))
	return c.AppendTo(b)
}
