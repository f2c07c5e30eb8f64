package core

import (
	"fmt"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// InitialInfo is what a server learns from the header of a datagram that
// may open a connection.
type InitialInfo struct {
	Version   wire.Version
	DstConnID wire.ConnectionID
	SrcConnID wire.ConnectionID
	// Token is the Initial's token (from a Retry or a NEW_TOKEN frame),
	// aliasing the datagram; see AddressValidator.Check.
	Token []byte
}

// PeekInitial checks whether a datagram can open a connection at a server:
// it starts with an Initial packet of a supported version, whose
// Destination Connection ID has at least 8 bytes (RFC 9000 section 7.2), in
// a datagram of at least 1200 bytes (section 14.1). The packet itself is
// not authenticated: NewServerConn and HandleDatagram do that.
func PeekInitial(datagram []byte) (InitialInfo, error) {
	if len(datagram) < minInitialDatagram {
		return InitialInfo{}, fmt.Errorf("quic core: %d-byte datagram cannot open a connection", len(datagram))
	}
	h, _, err := wire.ParseLongHeader(datagram)
	if err != nil {
		return InitialInfo{}, err
	}
	if h.Type != wire.PacketTypeInitial {
		return InitialInfo{}, fmt.Errorf("quic core: %v packet cannot open a connection", h.Type)
	}
	if h.DstConnID.Len() < 8 {
		return InitialInfo{}, fmt.Errorf("quic core: %d-byte destination connection ID: %w", h.DstConnID.Len(), wire.ErrConnectionIDLen)
	}
	return InitialInfo{Version: h.Version, DstConnID: h.DstConnID, SrcConnID: h.SrcConnID, Token: h.Token}, nil
}

// installInitialKeys gives the Initial space sp the keys derived from
// dcid, the Destination Connection ID of the client's Initial packets,
// with version v's salt (RFC 9001 section 5.2): one side's write keys are
// the other's read keys.
func (sp *pnSpace) installInitialKeys(dcid wire.ConnectionID, v wire.Version, isClient bool) error {
	client, server, err := crypto.NewInitial(dcid.Bytes(), crypto.Version(v))
	if err != nil {
		return err
	}
	if isClient {
		sp.write, sp.read = client, server
	} else {
		sp.write, sp.read = server, client
	}
	return nil
}
