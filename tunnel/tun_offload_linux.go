package tunnel

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// The offloads asked of the kernel: checksums, TSO for IPv4 and IPv6,
// and USO (Linux 6.2 and later) where it has it.
const (
	tunOffloadsTSO = unix.TUN_F_CSUM | unix.TUN_F_TSO4 | unix.TUN_F_TSO6
	tunOffloadsUSO = unix.TUN_F_USO4 | unix.TUN_F_USO6
)

// maxFrame is a virtio-net header and the largest IP packet.
const maxFrame = vnetHdrLen + 65535

// createOffloadedTUN creates the interface with offloads when wanted and
// the kernel grants them, and without otherwise.
func createOffloadedTUN(name string, mtu int, want bool) (*TUN, error) {
	if !want {
		t, err := createTUN(name, mtu, false)
		if err == nil {
			t.offMode = "off: disabled"
		}
		return t, err
	}
	t, err := createTUN(name, mtu, true)
	if err != nil {
		return nil, err
	}
	mode, err := setOffloads(int(t.file.Fd()))
	if err != nil {
		// The device must be made again without IFF_VNET_HDR: its
		// packets would otherwise carry a header nobody asked for.
		t.Close()
		t, cerr := createTUN(name, mtu, false)
		if cerr != nil {
			return nil, cerr
		}
		t.offMode = "off: the kernel refused them: " + err.Error()
		return t, nil
	}
	t.off = &offload{mode: mode, rbuf: make([]byte, maxFrame), wbuf: make([]byte, 0, maxFrame)}
	t.off.seg.done = true
	return t, nil
}

// setOffloads asks for TSO and USO, then TSO alone.
func setOffloads(fd int) (string, error) {
	if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunOffloadsTSO|tunOffloadsUSO); err == nil {
		return "tso+uso", nil
	}
	if err := unix.IoctlSetInt(fd, unix.TUNSETOFFLOAD, tunOffloadsTSO); err != nil {
		return "", fmt.Errorf("TUNSETOFFLOAD: %w", err)
	}
	return "tso", nil
}

// offload is a TUN's state with offloads on: one reader and, under wmu,
// writers.
type offload struct {
	mode string
	rbuf []byte
	seg  segmenter
	one  [1][]byte
	oneN [1]int

	wmu    sync.Mutex
	wbuf   []byte
	segs   []groSegment
	groups []groGroup

	framesRead, superRead, segmentsRead, badFrames  atomic.Uint64
	plainWrites, groWrites, groPackets, writeErrors atomic.Uint64
}

// read fills bufs from the current frame, reading the next one when the
// current is used up and nothing is in hand yet.
func (o *offload) read(f *os.File, bufs [][]byte, sizes []int) (int, error) {
	n := 0
	for n < len(bufs) {
		if o.seg.done {
			if n > 0 {
				break
			}
			m, err := f.Read(o.rbuf)
			if err != nil {
				return 0, err
			}
			o.framesRead.Add(1)
			if err := o.seg.reset(o.rbuf[:m]); err != nil {
				o.badFrames.Add(1)
				continue
			}
			if o.seg.gso {
				o.superRead.Add(1)
			}
		}
		m, ok, err := o.seg.next(bufs[n])
		if err != nil {
			o.badFrames.Add(1)
			continue
		}
		if ok {
			sizes[n] = m
			n++
		}
	}
	o.segmentsRead.Add(uint64(n))
	return n, nil
}

func (o *offload) readOne(f *os.File, b []byte) (int, error) {
	o.one[0] = b
	n, err := o.read(f, o.one[:], o.oneN[:])
	o.one[0] = nil
	if err != nil || n == 0 {
		return 0, cmp.Or(err, io.ErrNoProgress)
	}
	return o.oneN[0], nil
}

func (o *offload) writeOne(f *os.File, p []byte) error {
	o.wmu.Lock()
	defer o.wmu.Unlock()
	var h [vnetHdrLen]byte
	o.wbuf = append(append(o.wbuf[:0], h[:]...), p...)
	o.plainWrites.Add(1)
	if _, err := f.Write(o.wbuf); err != nil {
		o.writeErrors.Add(1)
		return err
	}
	return nil
}

// write joins what planGRO groups and writes each group.
func (o *offload) write(f *os.File, pkts [][]byte) (int, error) {
	o.wmu.Lock()
	defer o.wmu.Unlock()
	if cap(o.segs) < len(pkts) {
		o.segs = make([]groSegment, len(pkts))
	}
	segs := o.segs[:len(pkts)]
	o.groups = planGRO(pkts, segs, o.groups)
	failed := 0
	var first error
	for i := range o.groups {
		g := &o.groups[i]
		o.wbuf = appendGRO(o.wbuf[:0], pkts, segs, g)
		if len(g.members) > 1 {
			o.groWrites.Add(1)
			o.groPackets.Add(uint64(len(g.members)))
		} else {
			o.plainWrites.Add(1)
		}
		if _, err := f.Write(o.wbuf); err != nil {
			o.writeErrors.Add(1)
			failed += len(g.members)
			first = cmp.Or(first, err)
		}
	}
	return failed, first
}

func (o *offload) snapshot() OffloadStats {
	return OffloadStats{
		Mode: o.mode, FramesRead: o.framesRead.Load(), SuperPacketsRead: o.superRead.Load(),
		PacketsRead: o.segmentsRead.Load(), BadFrames: o.badFrames.Load(),
		PlainWrites: o.plainWrites.Load(), CoalescedWrites: o.groWrites.Load(),
		CoalescedPackets: o.groPackets.Load(), WriteErrors: o.writeErrors.Load(),
	}
}
