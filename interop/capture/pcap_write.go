package capture

import (
	"encoding/binary"
	"io"
)

// WritePcap writes records as a classic pcap of raw IP packets, with
// IPv4 or IPv6 and UDP headers made up around each datagram (checksums
// left out), so that Wireshark opens a tap's capture like the runner's,
// and decrypts it with the endpoints' key logs.
func WritePcap(w io.Writer, records []Record) error {
	var hdr [24]byte
	binary.LittleEndian.PutUint32(hdr[0:], pcapMagicNanos)
	binary.LittleEndian.PutUint16(hdr[4:], 2)
	binary.LittleEndian.PutUint16(hdr[6:], 4)
	binary.LittleEndian.PutUint32(hdr[16:], 65535)
	binary.LittleEndian.PutUint32(hdr[20:], linkTypeRaw)
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	for _, r := range records {
		src, dst := r.Client, r.Server
		if !r.FromClient {
			src, dst = dst, src
		}
		ecn := byte(max(r.ECN, 0))
		var ip []byte
		udpLen := 8 + len(r.Data)
		if src.Addr().Is4() && dst.Addr().Is4() {
			ip = make([]byte, 20)
			ip[0], ip[1] = 0x45, ecn
			binary.BigEndian.PutUint16(ip[2:], uint16(20+udpLen))
			ip[8], ip[9] = 64, 17
			a, b := src.Addr().As4(), dst.Addr().As4()
			copy(ip[12:], a[:])
			copy(ip[16:], b[:])
		} else {
			ip = make([]byte, 40)
			binary.BigEndian.PutUint32(ip, 6<<28|uint32(ecn)<<20)
			binary.BigEndian.PutUint16(ip[4:], uint16(udpLen))
			ip[6], ip[7] = 17, 64
			a, b := src.Addr().As16(), dst.Addr().As16()
			copy(ip[8:], a[:])
			copy(ip[24:], b[:])
		}
		var udp [8]byte
		binary.BigEndian.PutUint16(udp[0:], src.Port())
		binary.BigEndian.PutUint16(udp[2:], dst.Port())
		binary.BigEndian.PutUint16(udp[4:], uint16(udpLen))
		n := len(ip) + 8 + len(r.Data)
		var rec [16]byte
		binary.LittleEndian.PutUint32(rec[0:], uint32(r.Time.Unix()))
		binary.LittleEndian.PutUint32(rec[4:], uint32(r.Time.Nanosecond()))
		binary.LittleEndian.PutUint32(rec[8:], uint32(n))
		binary.LittleEndian.PutUint32(rec[12:], uint32(n))
		for _, part := range [][]byte{rec[:], ip, udp[:], r.Data} {
			if _, err := w.Write(part); err != nil {
				return err
			}
		}
	}
	return nil
}
