package tunnel

import (
	"encoding/binary"
	"fmt"
)

// A TUN device opened with IFF_VNET_HDR prefixes every packet with the
// virtio-net header (the virtio 1.x specification, section 5.1.6,
// struct virtio_net_hdr without num_buffers): what the kernel left for
// the device to do to a packet it reads, a segmentation (GSO) and a
// checksum, and what it is asked to assume of one it is given. Linux's
// TUN takes it in the host's byte order unless told otherwise.
const vnetHdrLen = 10

// virtio_net_hdr flags and GSO types.
const (
	vnetFlagNeedsCsum = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM

	gsoNone   = 0    // VIRTIO_NET_HDR_GSO_NONE
	gsoTCPv4  = 1    // VIRTIO_NET_HDR_GSO_TCPV4
	gsoTCPv6  = 4    // VIRTIO_NET_HDR_GSO_TCPV6
	gsoUDPL4  = 5    // VIRTIO_NET_HDR_GSO_UDP_L4 (USO)
	gsoECNBit = 0x80 // VIRTIO_NET_HDR_GSO_ECN: the TCP flow has ECN on
)

// vnetHdr is a parsed virtio-net header.
type vnetHdr struct {
	flags      uint8
	gsoType    uint8
	hdrLen     uint16 // headers' length of a GSO packet
	gsoSize    uint16 // payload bytes per segment
	csumStart  uint16 // where the checksum to complete starts
	csumOffset uint16 // where, from csumStart, it goes
}

// parseVnetHdr reads the header at the start of b.
func parseVnetHdr(b []byte) (vnetHdr, error) {
	if len(b) < vnetHdrLen {
		return vnetHdr{}, fmt.Errorf("tunnel: virtio-net header of %d bytes", len(b))
	}
	h := vnetHdr{
		flags: b[0], gsoType: b[1],
		hdrLen:     binary.NativeEndian.Uint16(b[2:]),
		gsoSize:    binary.NativeEndian.Uint16(b[4:]),
		csumStart:  binary.NativeEndian.Uint16(b[6:]),
		csumOffset: binary.NativeEndian.Uint16(b[8:]),
	}
	return h, nil
}

// put writes h at the start of b, which has room for it.
func (h vnetHdr) put(b []byte) {
	b[0], b[1] = h.flags, h.gsoType
	binary.NativeEndian.PutUint16(b[2:], h.hdrLen)
	binary.NativeEndian.PutUint16(b[4:], h.gsoSize)
	binary.NativeEndian.PutUint16(b[6:], h.csumStart)
	binary.NativeEndian.PutUint16(b[8:], h.csumOffset)
}
