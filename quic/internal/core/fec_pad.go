package core

import (
	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Padded source packets. A repair packet carries the FEC_REPAIR frame type
// (2 bytes), the Repair FEC Payload ID (8) and the coded symbol, whose
// 2-byte length prefix a source packet does not carry, where the source
// packet carries FEC_SOURCE_ID (3 to 6 bytes): over full sources a repair
// packet is 6 to 9 bytes longer than they are. Sent among them it ends a run of
// equal datagrams, which is what one UDP GSO send takes and what the
// receiver's GRO joins into one buffer: at 1% loss, with a repair every
// 20 to 30 packets, the runs fell from 36 datagrams to 13 and the kernel's
// work per datagram tripled at both ends of a tunnel.
//
// So a source packet at most repairPacketOverhead bytes short of the last
// repair packet gets PADDING frames in front of its FEC_SOURCE_ID, outside
// the symbol, up to that size: the full packets of a stream of data and
// the repairs among them are then all of one size. The padding costs 6 to
// 9 bytes per full packet whose symbol is as long as the repair's, at
// most 12 (under 1% of a full packet), and only goes to a peer
// that sent ParamFECPaddedSources: an endpoint built before it takes
// FEC_SOURCE_ID only as a packet's first frame (fec_conn.go).

// repairPacketOverhead is what a repair packet carries beyond its
// symbol's bytes: the frame type, the Repair FEC Payload ID and the coded
// symbol's length prefix.
const repairPacketOverhead = wire.FECRepairOverhead + fec.RepairIDLen + 2

// sourcePadding returns the PADDING to put before the FEC_SOURCE_ID frame
// (idLen bytes) of a source packet whose symbol is symbolLen bytes long:
// what makes the packet as long as the last repair packet, at most
// repairPacketOverhead bytes (a full packet, whose symbol is as long as
// the repair's, needs 6 to 9); 0 when the peer does not take it, before
// the first repair, or for a packet that is not full.
func (f *fecSender) sourcePadding(symbolLen, idLen int) int {
	if !f.padSources || f.lastRepairSymbol == 0 {
		return 0
	}
	pad := f.lastRepairSymbol + repairPacketOverhead - symbolLen - idLen
	if pad <= 0 || pad > repairPacketOverhead {
		return 0
	}
	return pad
}

// noteRepairSize records the symbol length of a repair sent whose data
// (Repair FEC Payload ID and coded symbol) is dataLen bytes long.
func (f *fecSender) noteRepairSize(dataLen int) {
	f.lastRepairSymbol = max(dataLen-fec.RepairIDLen-2, 0)
}
