//go:build linux && !purego

package udp

import (
	"encoding/binary"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/satquic/satquic/internal/ecn"
)

const (
	// recvOOBSize is the control buffer per received message: GRO segment
	// size, TOS or traffic class, and packet info, with room to spare.
	recvOOBSize = 128
	// sendOOBSize is the control buffer per sent message: GSO segment
	// size, TOS or traffic class, and packet info.
	sendOOBSize = 128
)

// cmsgHeaderLen is where a control message's data starts.
var cmsgHeaderLen = unix.CmsgLen(0)

// rxInfo is what the control messages of one received buffer say.
type rxInfo struct {
	segment int // GRO segment size; 0 when the buffer is one datagram
	ecn     ecn.Codepoint
	local   netip.Addr
	ifIndex int
}

// parseControl reads the control messages the kernel attached to a
// received buffer. It needs no allocation, unlike
// unix.ParseSocketControlMessage, and skips what it does not know.
func parseControl(b []byte) rxInfo {
	var info rxInfo
	for len(b) >= cmsgHeaderLen {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		n := int(h.Len)
		if n < cmsgHeaderLen || n > len(b) {
			break
		}
		data := b[cmsgHeaderLen:n]
		switch {
		case h.Level == unix.IPPROTO_UDP && h.Type == unix.UDP_GRO && len(data) >= 4:
			info.segment = int(binary.NativeEndian.Uint32(data))
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_TOS && len(data) >= 1:
			info.ecn = ecn.Codepoint(data[0] & ecn.Mask)
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_TCLASS && len(data) >= 4:
			info.ecn = ecn.Codepoint(binary.NativeEndian.Uint32(data) & ecn.Mask)
		case h.Level == unix.IPPROTO_IP && h.Type == unix.IP_PKTINFO && len(data) >= unix.SizeofInet4Pktinfo:
			// ipi_addr, the destination in the IP header, not
			// ipi_spec_dst, the address routing would answer from.
			info.ifIndex = int(int32(binary.NativeEndian.Uint32(data[0:4])))
			info.local = netip.AddrFrom4([4]byte(data[8:12]))
		case h.Level == unix.IPPROTO_IPV6 && h.Type == unix.IPV6_PKTINFO && len(data) >= unix.SizeofInet6Pktinfo:
			info.local = netip.AddrFrom16([16]byte(data[0:16])).Unmap()
			info.ifIndex = int(binary.NativeEndian.Uint32(data[16:20]))
		}
		next := unix.CmsgSpace(n - cmsgHeaderLen)
		if next >= len(b) {
			break
		}
		b = b[next:]
	}
	return info
}

// putControl writes a control message header for datalen bytes at the
// start of b and returns its data and the length it takes, alignment
// included. b must have room for unix.CmsgSpace(datalen) bytes and start
// at an aligned offset.
func putControl(b []byte, level, typ int32, datalen int) (data []byte, size int) {
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level = level
	h.Type = typ
	h.SetLen(unix.CmsgLen(datalen))
	size = unix.CmsgSpace(datalen)
	clear(b[cmsgHeaderLen:size])
	return b[cmsgHeaderLen : cmsgHeaderLen+datalen], size
}

// txInfo is what one sent message asks of the kernel beyond its payload.
type txInfo struct {
	segment int           // GSO segment size; 0 for a single datagram
	ecn     ecn.Codepoint // codepoint for the IP header
	ipv4    bool          // the peer is IPv4 (plain or v4-mapped): use SOL_IP options
	local   netip.Addr
	ifIndex int
}

// appendControl writes the control messages for info into b (sendOOBSize
// bytes) and returns how many bytes they take.
func appendControl(b []byte, info txInfo) int {
	off := 0
	if info.segment > 0 {
		data, n := putControl(b[off:], unix.IPPROTO_UDP, unix.UDP_SEGMENT, 2)
		binary.NativeEndian.PutUint16(data, uint16(info.segment))
		off += n
	}
	if info.ecn != ecn.NotECT {
		// IPv4 peers, even on an IPv6 socket, go through the IPv4 output
		// path, which reads only IP_TOS; IPv6 reads only IPV6_TCLASS.
		level, typ := int32(unix.IPPROTO_IPV6), int32(unix.IPV6_TCLASS)
		if info.ipv4 {
			level, typ = unix.IPPROTO_IP, unix.IP_TOS
		}
		data, n := putControl(b[off:], level, typ, 4)
		binary.NativeEndian.PutUint32(data, uint32(info.ecn))
		off += n
	}
	if info.local.IsValid() || info.ifIndex != 0 {
		if info.ipv4 {
			data, n := putControl(b[off:], unix.IPPROTO_IP, unix.IP_PKTINFO, unix.SizeofInet4Pktinfo)
			binary.NativeEndian.PutUint32(data[0:4], uint32(int32(info.ifIndex)))
			if l := info.local.Unmap(); l.Is4() {
				spec := l.As4()
				copy(data[4:8], spec[:]) // ipi_spec_dst: the source to use
			}
			off += n
		} else {
			data, n := putControl(b[off:], unix.IPPROTO_IPV6, unix.IPV6_PKTINFO, unix.SizeofInet6Pktinfo)
			if info.local.Is6() {
				a := info.local.As16()
				copy(data[0:16], a[:])
			}
			binary.NativeEndian.PutUint32(data[16:20], uint32(info.ifIndex))
			off += n
		}
	}
	return off
}
