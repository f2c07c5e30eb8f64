package wire

import "fmt"

// Validate applies the rules of RFC 9000 sections 7.3, 7.4 and 18.2, RFC
// 9368 section 4 and RFC 9221 section 3 to parameters sent by sender. It
// returns a *TransportError of type TRANSPORT_PARAMETER_ERROR naming the
// first rule broken.
func (p *TransportParameters) Validate(sender Perspective) error {
	checks := [...]func(Perspective) string{
		p.checkSender,
		p.checkRequired,
		p.checkIntegers,
		p.checkOptional,
		p.checkExtensions,
	}
	for _, check := range checks {
		if reason := check(sender); reason != "" {
			return transportParameterError("%s", reason)
		}
	}
	return nil
}

// checkSender: a client must not send server-only parameters (RFC 9000
// section 18.2).
func (p *TransportParameters) checkSender(sender Perspective) string {
	switch sender {
	case PerspectiveServer:
		return ""
	case PerspectiveClient:
	default:
		return "unknown sender " + sender.String()
	}
	switch {
	case p.OriginalDestinationConnectionID != nil:
		return "client sent original_destination_connection_id"
	case p.StatelessResetToken != nil:
		return "client sent stateless_reset_token"
	case p.PreferredAddress != nil:
		return "client sent preferred_address"
	case p.RetrySourceConnectionID != nil:
		return "client sent retry_source_connection_id"
	}
	return ""
}

// checkRequired: both endpoints send initial_source_connection_id, and a
// server sends original_destination_connection_id (RFC 9000 section 7.3).
func (p *TransportParameters) checkRequired(sender Perspective) string {
	if p.InitialSourceConnectionID == nil {
		return "initial_source_connection_id missing"
	}
	if sender == PerspectiveServer && p.OriginalDestinationConnectionID == nil {
		return "server did not send original_destination_connection_id"
	}
	return ""
}

// checkIntegers applies the range rules of RFC 9000 sections 4.6 and 18.2.
func (p *TransportParameters) checkIntegers(Perspective) string {
	switch {
	case p.MaxUDPPayloadSize < MinMaxUDPPayloadSize:
		return "max_udp_payload_size below 1200"
	case p.AckDelayExponent > MaxAckDelayExponent:
		return "ack_delay_exponent above 20"
	case p.MaxAckDelayMs > MaxMaxAckDelayMs:
		return "max_ack_delay of 2^14 ms or more"
	case p.ActiveConnectionIDLimit < MinActiveConnectionIDLimit:
		return "active_connection_id_limit below 2"
	case p.InitialMaxStreamsBidi > MaxStreamsLimit:
		return "initial_max_streams_bidi above 2^60"
	case p.InitialMaxStreamsUni > MaxStreamsLimit:
		return "initial_max_streams_uni above 2^60"
	}
	for _, v := range [...]uint64{
		p.MaxIdleTimeoutMs, p.MaxUDPPayloadSize, p.InitialMaxData,
		p.InitialMaxStreamDataBidiLocal, p.InitialMaxStreamDataBidiRemote,
		p.InitialMaxStreamDataUni, p.MaxDatagramFrameSize,
	} {
		if v > MaxVarint {
			return "integer parameter above 2^62-1"
		}
	}
	return ""
}

// checkOptional checks the structured parameters.
func (p *TransportParameters) checkOptional(sender Perspective) string {
	if a := p.PreferredAddress; a != nil {
		if reason := a.check(); reason != "" {
			return reason
		}
		// RFC 9000 section 18.2: a server using zero-length connection
		// IDs must not offer a preferred address.
		if p.InitialSourceConnectionID != nil && p.InitialSourceConnectionID.Len() == 0 {
			return "preferred_address from a server using zero-length connection IDs"
		}
	}
	if v := p.VersionInformation; v != nil {
		return v.check(sender)
	}
	return ""
}

// checkExtensions: extension IDs must be encodable and must not shadow a
// parameter that has a field, which would send it twice.
func (p *TransportParameters) checkExtensions(Perspective) string {
	for id := range p.Extensions {
		if id > MaxVarint || IsKnownTransportParameter(id) {
			return fmt.Sprintf("extension parameter 0x%x has a defined or invalid ID", id)
		}
	}
	return ""
}
