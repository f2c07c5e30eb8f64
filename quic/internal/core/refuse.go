package core

import (
	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// RefuseInitial appends to buf a datagram that ends the connection attempt
// info describes without creating a connection: an Initial packet with a
// CONNECTION_CLOSE frame carrying a transport error code (RFC 9000 section
// 10.2.3), for instance INVALID_TOKEN after ErrInvalidToken (section
// 8.1.2) or CONNECTION_REFUSED from a server that takes no more
// connections. It is smaller than the client's Initial, so it respects the
// amplification limit.
func RefuseInitial(buf []byte, info InitialInfo, code uint64, reason string) ([]byte, error) {
	_, server, err := crypto.NewInitial(info.DstConnID.Bytes(), crypto.Version(info.Version))
	if err != nil {
		return buf, err
	}
	f := wire.ConnectionCloseFrame{ErrorCode: code, ReasonPhrase: truncateReason(reason)}
	payload, err := f.Append(nil)
	if err != nil {
		return buf, err
	}
	const pnLen = 2
	if short := 4 - pnLen - len(payload); short > 0 {
		// Room for the header protection sample (RFC 9001 section
		// 5.4.2).
		payload = append(payload, make([]byte, short)...)
	}
	h := wire.LongHeader{
		Type: wire.PacketTypeInitial, Version: info.Version,
		DstConnID: info.SrcConnID, SrcConnID: info.DstConnID,
		Length: uint64(pnLen + len(payload) + crypto.TagLen), LengthLen: lengthFieldLen,
		PacketNumberLen: pnLen,
	}
	pkt, err := wire.AppendLongHeader(nil, &h)
	if err != nil {
		return buf, err
	}
	pnOffset := len(pkt) - pnLen
	pkt = append(pkt, payload...)
	sealed, err := server.Protect(pkt, pnOffset, 0)
	if err != nil {
		return buf, err
	}
	return append(buf, sealed...), nil
}
