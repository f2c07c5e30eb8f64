//go:build linux && !purego

package udp

import (
	"net/netip"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// reader is the receive half of a linuxConn. Its kernel-facing arrays
// grow to the largest batch seen and are reused, so that steady-state
// reads allocate nothing.
type reader struct {
	c     *linuxConn
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []sockaddr
	oob   []byte
	bufs  [][]byte // the caller's buffer behind each header
	owner []int    // the index of that buffer's message

	// pending holds what the last recvmmsg returned beyond the room the
	// caller gave: the tail of a GRO buffer, and the buffers after it.
	pending []run
	next    int // first run of pending not yet delivered

	// The system call's inputs and results live here, not in a closure,
	// so that the function handed to RawConn.Read is built once.
	vlen   int
	n      int
	errno  unix.Errno
	callFn func(fd uintptr) bool
}

// run is a received buffer: one datagram, or a GRO buffer of datagrams of
// equal size (the last may be shorter) from one peer.
type run struct {
	data      []byte // datagrams not yet delivered
	peer      netip.AddrPort
	info      rxInfo
	truncated bool // the kernel cut the buffer short
	bufIndex  int  // the message whose Buf holds data
}

// take moves the next datagram of the run into m and reports whether the
// run has more.
func (r *run) take(m *Message) bool {
	n := len(r.data)
	seg := r.info.segment
	if seg > 0 && n > seg {
		n = seg
	}
	last := n == len(r.data)
	m.Data = r.data[:n:n]
	m.Addr = r.peer
	m.Local = r.info.local
	m.IfIndex = r.info.ifIndex
	m.ECN = r.info.ecn
	m.BufIndex = r.bufIndex
	// A GRO buffer cut at a segment boundary lost whole datagrams, which
	// the sender's loss recovery will see; only a partial one is flagged.
	m.Truncated = last && r.truncated && (seg == 0 || n < seg)
	r.data = r.data[n:]
	return !last
}

func (r *reader) init(c *linuxConn) {
	r.c = c
	r.callFn = r.call
}

func (r *reader) grow(n int) {
	if cap(r.hdrs) >= n {
		return
	}
	r.hdrs = make([]unix.Mmsghdr, n)
	r.iovs = make([]unix.Iovec, n)
	r.names = make([]sockaddr, n)
	r.oob = make([]byte, n*recvOOBSize)
	r.bufs = make([][]byte, n)
	r.owner = make([]int, n)
	r.pending = make([]run, 0, n)
	r.next = 0
}

func (r *reader) readBatch(msgs []Message) (int, error) {
	if r.next < len(r.pending) {
		return r.drain(msgs), nil
	}
	r.grow(len(msgs))
	vlen := 0
	for i := range msgs {
		b := msgs[i].Buf
		if len(b) == 0 {
			continue
		}
		r.bufs[vlen], r.owner[vlen] = b, i
		iov := &r.iovs[vlen]
		iov.Base = &b[0]
		iov.SetLen(len(b))
		h := &r.hdrs[vlen]
		h.Len = 0
		h.Hdr.Name = (*byte)(unsafe.Pointer(&r.names[vlen]))
		h.Hdr.Namelen = unix.SizeofSockaddrInet6
		h.Hdr.Iov = iov
		h.Hdr.SetIovlen(1)
		h.Hdr.Control = &r.oob[vlen*recvOOBSize]
		h.Hdr.SetControllen(recvOOBSize)
		h.Hdr.Flags = 0
		vlen++
	}
	if vlen == 0 {
		return 0, errNoBuffer
	}
	r.vlen = vlen
	if err := r.c.raw.Read(r.callFn); err != nil {
		return 0, err
	}
	if r.errno != 0 {
		return 0, os.NewSyscallError("recvmmsg", r.errno)
	}

	r.pending = r.pending[:0]
	r.next = 0
	out, coalesced := 0, 0
	for i := range r.n {
		h := &r.hdrs[i]
		ctl := r.oob[i*recvOOBSize : i*recvOOBSize+int(h.Hdr.Controllen)]
		rn := run{
			data:      r.bufs[i][:h.Len],
			peer:      sockaddrAddrPort(&r.names[i]),
			info:      parseControl(ctl),
			truncated: h.Hdr.Flags&unix.MSG_TRUNC != 0,
			bufIndex:  r.owner[i],
		}
		if rn.info.segment > 0 && len(rn.data) > rn.info.segment {
			coalesced++
		}
		more := true
		for more && out < len(msgs) {
			more = rn.take(&msgs[out])
			out++
		}
		if more {
			r.pending = append(r.pending, rn)
		}
	}
	r.c.stats.readCalls.Add(1)
	r.c.stats.readDatagrams.Add(uint64(out))
	r.c.stats.groBuffers.Add(uint64(coalesced))
	return out, nil
}

// drain delivers datagrams left over from the previous call, without a
// system call: their buffers may be among msgs, so nothing new can be
// received into msgs until they are out.
func (r *reader) drain(msgs []Message) int {
	out := 0
	for out < len(msgs) && r.next < len(r.pending) {
		if !r.pending[r.next].take(&msgs[out]) {
			r.pending[r.next] = run{} // drop the reference to the caller's buffer
			r.next++
		}
		out++
	}
	r.c.stats.readDatagrams.Add(uint64(out))
	return out
}

// call runs recvmmsg for RawConn.Read: false asks the poller to wait for
// the socket to become readable and call again.
func (r *reader) call(fd uintptr) bool {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.hdrs[0])), uintptr(r.vlen), unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			r.n, r.errno = int(n), 0
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		r.n, r.errno = 0, errno
		return true
	}
}
