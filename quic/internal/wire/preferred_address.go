package wire

import (
	"encoding/binary"
	"net/netip"
)

// PreferredAddress is the server's preferred_address transport parameter
// (RFC 9000 sections 9.6 and 18.2). An address family the server does not
// offer is the zero netip.AddrPort, sent as all-zero address and port.
type PreferredAddress struct {
	IPv4                netip.AddrPort
	IPv6                netip.AddrPort
	ConnectionID        ConnectionID
	StatelessResetToken StatelessResetToken
}

func (a *PreferredAddress) append(b []byte) []byte {
	var v4 [4]byte
	if a.IPv4.IsValid() {
		v4 = a.IPv4.Addr().As4()
	}
	b = append(b, v4[:]...)
	b = binary.BigEndian.AppendUint16(b, a.IPv4.Port())
	var v6 [16]byte
	if a.IPv6.IsValid() {
		v6 = a.IPv6.Addr().As16()
	}
	b = append(b, v6[:]...)
	b = binary.BigEndian.AppendUint16(b, a.IPv6.Port())
	b = appendConnIDWithLen(b, a.ConnectionID)
	return append(b, a.StatelessResetToken[:]...)
}

// check returns why a cannot be sent, or "".
func (a *PreferredAddress) check() string {
	if a.IPv4.IsValid() && !a.IPv4.Addr().Is4() {
		return "preferred_address IPv4 field holds " + a.IPv4.Addr().String()
	}
	if a.IPv6.IsValid() && (!a.IPv6.Addr().Is6() || a.IPv6.Addr().Zone() != "") {
		return "preferred_address IPv6 field holds " + a.IPv6.Addr().String()
	}
	// RFC 9000 section 18.2: the connection ID may not be empty.
	if a.ConnectionID.Len() == 0 {
		return "preferred_address with an empty connection ID"
	}
	return ""
}

func parsePreferredAddress(value []byte) (*PreferredAddress, error) {
	c := cursor{b: value}
	var a PreferredAddress
	v4 := c.bytes(4)
	port4 := c.uint16()
	v6 := c.bytes(16)
	port6 := c.uint16()
	id, err := readConnectionID(&c)
	if err != nil {
		return nil, transportParameterError("preferred_address connection ID: %v", err)
	}
	token := c.bytes(StatelessResetTokenLen)
	if c.short || c.remaining() != 0 {
		return nil, transportParameterError("preferred_address of %d bytes", len(value))
	}
	a.IPv4 = addrPortOrZero(netip.AddrFrom4([4]byte(v4)), port4)
	a.IPv6 = addrPortOrZero(netip.AddrFrom16([16]byte(v6)), port6)
	a.ConnectionID = id
	copy(a.StatelessResetToken[:], token)
	if reason := a.check(); reason != "" {
		return nil, transportParameterError("%s", reason)
	}
	return &a, nil
}

// addrPortOrZero maps the all-zero address and port, which stands for an
// address family not offered, to the zero AddrPort.
func addrPortOrZero(addr netip.Addr, port uint16) netip.AddrPort {
	if addr.IsUnspecified() && port == 0 {
		return netip.AddrPort{}
	}
	return netip.AddrPortFrom(addr, port)
}

// VersionInformation is the version_information transport parameter (RFC
// 9368 section 3): the version the sender chose and, from a client, the
// versions its first flight is compatible with, in order of preference,
// or, from a server, the versions it fully supports.
type VersionInformation struct {
	Chosen    Version
	Available []Version
}

func (v *VersionInformation) append(b []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(v.Chosen))
	for _, a := range v.Available {
		b = binary.BigEndian.AppendUint32(b, uint32(a))
	}
	return b
}

// check applies RFC 9368 section 4: no version 0, and a client lists its
// chosen version among the available ones. It returns why v is invalid,
// or "".
func (v *VersionInformation) check(sender Perspective) string {
	if v.Chosen == 0 {
		return "version_information chooses version 0"
	}
	listed := false
	for _, a := range v.Available {
		if a == 0 {
			return "version_information lists version 0"
		}
		listed = listed || a == v.Chosen
	}
	if sender == PerspectiveClient && !listed {
		return "client version_information does not list its chosen version"
	}
	return ""
}

func parseVersionInformation(value []byte, sender Perspective) (*VersionInformation, error) {
	if len(value) < 4 || len(value)%4 != 0 {
		return nil, transportParameterError("version_information of %d bytes", len(value))
	}
	v := &VersionInformation{Chosen: Version(binary.BigEndian.Uint32(value))}
	if len(value) > 4 {
		v.Available = make([]Version, 0, len(value)/4-1)
		for i := 4; i < len(value); i += 4 {
			v.Available = append(v.Available, Version(binary.BigEndian.Uint32(value[i:])))
		}
	}
	if reason := v.check(sender); reason != "" {
		return nil, transportParameterError("%s", reason)
	}
	return v, nil
}
