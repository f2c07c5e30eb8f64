//go:build linux

package emulate

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"time"
)

// Classic pcap (the libpcap file format, draft-ietf-opsawg-pcap): a 24-byte
// file header, then a 16-byte header before each packet. The magic number
// a1b23c4d announces nanosecond timestamps; LINKTYPE_RAW says each record
// starts with an IPv4 or IPv6 header.
const (
	pcapMagicNanos = 0xa1b23c4d
	pcapVersionMaj = 2
	pcapVersionMin = 4
	pcapSnapLen    = 65535
	linkTypeRaw    = 101
)

// pcapWriter writes one direction's packets to a file. It is used by one
// goroutine at a time (the direction's sender) and buffered, so close must
// be called to flush it.
type pcapWriter struct {
	file *os.File
	w    *bufio.Writer
	hdr  [16]byte
	err  error
}

func createPcap(path string) (*pcapWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("pcap: %w", err)
	}
	p := &pcapWriter{file: f, w: bufio.NewWriterSize(f, 256<<10)}
	var h [24]byte
	binary.LittleEndian.PutUint32(h[0:], pcapMagicNanos)
	binary.LittleEndian.PutUint16(h[4:], pcapVersionMaj)
	binary.LittleEndian.PutUint16(h[6:], pcapVersionMin)
	binary.LittleEndian.PutUint32(h[16:], pcapSnapLen)
	binary.LittleEndian.PutUint32(h[20:], linkTypeRaw)
	if _, err := p.w.Write(h[:]); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("pcap %s: %w", path, err)
	}
	return p, nil
}

// write records one IP packet, made of up to two parts (a header the
// emulator synthesised and the payload), taken at wall-clock time t. The
// first write error sticks and is reported by close.
func (p *pcapWriter) write(t time.Time, parts ...[]byte) {
	if p.err != nil {
		return
	}
	total := 0
	for _, b := range parts {
		total += len(b)
	}
	captured := min(total, pcapSnapLen)
	ns := t.UnixNano()
	binary.LittleEndian.PutUint32(p.hdr[0:], uint32(ns/1e9))
	binary.LittleEndian.PutUint32(p.hdr[4:], uint32(ns%1e9))
	binary.LittleEndian.PutUint32(p.hdr[8:], uint32(captured))
	binary.LittleEndian.PutUint32(p.hdr[12:], uint32(total))
	_, p.err = p.w.Write(p.hdr[:])
	for _, b := range parts {
		if p.err != nil || captured == 0 {
			break
		}
		n := min(len(b), captured)
		_, p.err = p.w.Write(b[:n])
		captured -= n
	}
}

func (p *pcapWriter) close() error {
	err := p.err
	if ferr := p.w.Flush(); err == nil {
		err = ferr
	}
	if cerr := p.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pcap %s: %w", p.file.Name(), err)
	}
	return nil
}
