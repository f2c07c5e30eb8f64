// Package tunneltest provides an in-memory tunnel.Device, for tests of a
// tunnel.Forwarder and of what runs one without a TUN interface: the test
// plays the kernel, putting packets in Inject and taking what the tunnel
// wrote from Written. BatchDevice reads and writes batches, as a TUN
// interface with offloads does; IPv4Packet numbers the packets it builds.
package tunneltest

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/inetsum"
)

// ErrClosed is returned by a Device's methods once it is closed.
var ErrClosed = errors.New("tunneltest: device closed")

// Device is an in-memory tunnel.Device. Replace its channels before the
// tunnel runs to change their capacity.
type Device struct {
	// Inject holds the packets the tunnel reads (64 by default).
	Inject chan []byte
	// Written receives copies of the packets the tunnel writes (4096 by
	// default); a write waits for room, as a full device queue holds
	// the writer back.
	Written chan []byte
	mtu     int
	done    chan struct{}
	once    sync.Once
}

// NewDevice returns a Device of the given MTU.
func NewDevice(mtu int) *Device {
	return &Device{mtu: mtu, Inject: make(chan []byte, 64), Written: make(chan []byte, 4096), done: make(chan struct{})}
}

// ReadPacket copies the next injected packet into b.
func (d *Device) ReadPacket(b []byte) (int, error) {
	select {
	case p := <-d.Inject:
		return copy(b, p), nil
	case <-d.done:
		return 0, ErrClosed
	}
}

// WritePacket sends a copy of p to Written.
func (d *Device) WritePacket(p []byte) error {
	select {
	case d.Written <- append([]byte(nil), p...):
		return nil
	case <-d.done:
		return ErrClosed
	}
}

// MTU is the device's MTU.
func (d *Device) MTU() int { return d.mtu }

// Close ends the reads and writes waiting and to come.
func (d *Device) Close() error {
	d.once.Do(func() { close(d.done) })
	return nil
}

// Closed reports whether the device was closed.
func (d *Device) Closed() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Expect waits for the next packet the tunnel wrote, failing the test
// after a generous 20 s.
func (d *Device) Expect(t testing.TB) []byte {
	t.Helper()
	select {
	case p := <-d.Written:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("no packet came out of the tunnel")
		return nil
	}
}

// BatchDevice is a Device that reads every packet injected so far in one
// call and writes batches (tunnel.BatchDevice); Batches, if set, learns
// the size of each batch written, as long as it has room.
type BatchDevice struct {
	*Device
	Batches chan int
}

// ReadPackets waits for one packet, then takes those injected meanwhile,
// up to len(bufs).
func (d BatchDevice) ReadPackets(bufs [][]byte, sizes []int) (int, error) {
	n, err := d.ReadPacket(bufs[0])
	if err != nil {
		return 0, err
	}
	sizes[0] = n
	got := 1
	for got < len(bufs) {
		select {
		case p := <-d.Inject:
			sizes[got] = copy(bufs[got], p)
			got++
		default:
			return got, nil
		}
	}
	return got, nil
}

// WritePackets copies each packet, as the kernel does on a write: what
// reaches Written is what the buffer held at the write.
func (d BatchDevice) WritePackets(pkts [][]byte) (int, error) {
	select {
	case d.Batches <- len(pkts):
	default:
	}
	for i, p := range pkts {
		if err := d.WritePacket(p); err != nil {
			return len(pkts) - i, err
		}
	}
	return 0, nil
}

// LargestBatch drains Batches and returns the largest batch written.
func (d BatchDevice) LargestBatch() int {
	largest := 0
	for len(d.Batches) > 0 {
		largest = max(largest, <-d.Batches)
	}
	return largest
}

// IPv4Packet builds an IPv4 packet of protocol UDP and size bytes from
// src to dst, with a valid header checksum, zeros after the header and
// seq in its last four bytes.
func IPv4Packet(src, dst netip.Addr, size int, seq uint32) []byte {
	p := make([]byte, size)
	p[0], p[8], p[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(p[2:4], uint16(size))
	s, d := src.As4(), dst.As4()
	copy(p[12:16], s[:])
	copy(p[16:20], d[:])
	binary.BigEndian.PutUint16(p[10:12], inetsum.Checksum(0, p[:20]))
	binary.BigEndian.PutUint32(p[size-4:], seq)
	return p
}

// Seq is the number IPv4Packet put in p.
func Seq(p []byte) uint32 { return binary.BigEndian.Uint32(p[len(p)-4:]) }
