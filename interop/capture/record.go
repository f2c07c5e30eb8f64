package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// Record is one UDP datagram between the client and the server.
type Record struct {
	Time       time.Time
	FromClient bool
	// Client and Server are the two ends as the capture saw them; a
	// client's flow is told apart from others by its address.
	Client, Server netip.AddrPort
	// ECN is the codepoint of the IP header (0 Not-ECT, 1 ECT(1), 2
	// ECT(0), 3 CE), or -1 where the capture could not see it.
	ECN int
	// Data is the UDP payload.
	Data []byte
}

// Classic pcap: a 24-byte file header whose magic number gives the byte
// order and the timestamp unit, then a 16-byte header before each packet.
const (
	pcapMagicMicros = 0xa1b2c3d4
	pcapMagicNanos  = 0xa1b23c4d
	linkTypeRaw     = 101 // each packet starts with an IPv4 or IPv6 header
)

// ReadPcap reads the UDP datagrams of a classic pcap file of raw IP
// packets (LINKTYPE_RAW, as package emulate writes them). isClient says
// which address is the client's; datagrams between other addresses, and
// packets that are not UDP, are skipped.
func ReadPcap(data []byte, isClient func(netip.AddrPort) bool) ([]Record, error) {
	if len(data) < 24 {
		return nil, errors.New("capture: pcap: no file header")
	}
	var order binary.ByteOrder = binary.LittleEndian
	magic := order.Uint32(data)
	if magic != pcapMagicMicros && magic != pcapMagicNanos {
		order = binary.BigEndian
		magic = order.Uint32(data)
	}
	if magic != pcapMagicMicros && magic != pcapMagicNanos {
		return nil, fmt.Errorf("capture: pcap: magic number %#08x", magic)
	}
	if lt := order.Uint32(data[20:]); lt != linkTypeRaw {
		return nil, fmt.Errorf("capture: pcap: link type %d, want raw IP (%d)", lt, linkTypeRaw)
	}
	unit := time.Microsecond
	if magic == pcapMagicNanos {
		unit = time.Nanosecond
	}
	var out []Record
	for b := data[24:]; len(b) >= 16; {
		sec, frac, n := order.Uint32(b), order.Uint32(b[4:]), int(order.Uint32(b[8:]))
		if len(b) < 16+n {
			return out, errors.New("capture: pcap: truncated packet")
		}
		pkt := b[16 : 16+n]
		b = b[16+n:]
		src, dst, ecn, payload, ok := parseIPUDP(pkt)
		if !ok {
			continue
		}
		r := Record{Time: time.Unix(int64(sec), int64(frac)*int64(unit)), ECN: ecn, Data: payload}
		switch {
		case isClient(src):
			r.FromClient, r.Client, r.Server = true, src, dst
		case isClient(dst):
			r.Client, r.Server = dst, src
		default:
			continue
		}
		out = append(out, r)
	}
	return out, nil
}

// parseIPUDP reads the addresses, ECN codepoint and UDP payload of an
// IPv4 or IPv6 packet carrying UDP (no IPv6 extension headers).
func parseIPUDP(p []byte) (src, dst netip.AddrPort, ecn int, payload []byte, ok bool) {
	if len(p) < 1 {
		return
	}
	var udp []byte
	var sa, da netip.Addr
	switch p[0] >> 4 {
	case 4:
		ihl := int(p[0]&0x0f) * 4
		if len(p) < ihl || ihl < 20 || p[9] != 17 {
			return
		}
		ecn = int(p[1] & 0x03)
		sa, da = netip.AddrFrom4([4]byte(p[12:16])), netip.AddrFrom4([4]byte(p[16:20]))
		udp = p[ihl:]
	case 6:
		if len(p) < 40 || p[6] != 17 {
			return
		}
		ecn = int(binary.BigEndian.Uint16(p)>>4) & 0x03
		sa, da = netip.AddrFrom16([16]byte(p[8:24])), netip.AddrFrom16([16]byte(p[24:40]))
		udp = p[40:]
	default:
		return
	}
	if len(udp) < 8 {
		return
	}
	ln := int(binary.BigEndian.Uint16(udp[4:]))
	if ln < 8 || ln > len(udp) {
		return
	}
	src = netip.AddrPortFrom(sa, binary.BigEndian.Uint16(udp))
	dst = netip.AddrPortFrom(da, binary.BigEndian.Uint16(udp[2:]))
	return src, dst, ecn, udp[8:ln], true
}
