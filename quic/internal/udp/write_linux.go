//go:build linux && !purego

package udp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// writer is the send half of a linuxConn. A batch becomes one header per
// datagram, or one per GSO run: consecutive datagrams to one peer, with
// the same ECN codepoint and source, of one size (the last may be
// shorter), whose iovecs the kernel joins and cuts again into datagrams.
type writer struct {
	c     *linuxConn
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec // one per message
	names []sockaddr   // one per header
	oob   []byte       // sendOOBSize bytes per header
	first []int        // header k sends msgs[first[k]:first[k+1]]

	start, end int // headers the next sendmmsg sends
	n          int
	errno      unix.Errno
	callFn     func(fd uintptr) bool
}

func (w *writer) init(c *linuxConn) {
	w.c = c
	w.callFn = w.call
}

func (w *writer) grow(n int) {
	if cap(w.hdrs) >= n {
		return
	}
	w.hdrs = make([]unix.Mmsghdr, n)
	w.iovs = make([]unix.Iovec, n)
	w.names = make([]sockaddr, n)
	w.oob = make([]byte, n*sendOOBSize)
	w.first = make([]int, n+1)
}

func (w *writer) writeBatch(msgs []Message) (int, error) {
	w.grow(len(msgs))
	sent := 0
	for sent < len(msgs) {
		nh, planErr := w.plan(msgs[sent:], w.c.gso.Load())
		k, err := w.send(nh)
		sent += w.first[k]
		w.account(k)
		if err == nil {
			if planErr != nil {
				return sent, planErr
			}
			continue
		}
		size := w.first[k+1] - w.first[k]
		if size == 1 || !(errors.Is(err, unix.EIO) || errors.Is(err, unix.EINVAL)) {
			return sent, wrapSendErr(err)
		}
		// A GSO send failed with the errors of a device without checksum
		// offload (EIO) or of a path that cannot take GSO (EINVAL, seen
		// with some IPv6 setups). Send the run one datagram at a time: if
		// that works, GSO was the cause, and it stays off from now on;
		// if not, the datagrams themselves are at fault (EMSGSIZE, say).
		gsoFault := err
		nh, _ = w.plan(msgs[sent:sent+size], false)
		k, err = w.send(nh)
		sent += w.first[k]
		w.account(k)
		if err != nil {
			return sent, wrapSendErr(err)
		}
		w.c.disableGSO(fmt.Errorf("sendmmsg with UDP_SEGMENT: %w", gsoFault))
	}
	return sent, nil
}

func wrapSendErr(err error) error {
	if errno, ok := err.(unix.Errno); ok {
		return os.NewSyscallError("sendmmsg", errno)
	}
	return err
}

// account counts the first k headers of the last plan as sent.
func (w *writer) account(k int) {
	if k == 0 {
		return
	}
	gso := 0
	for i := range k {
		if w.first[i+1]-w.first[i] > 1 {
			gso++
		}
	}
	w.c.stats.writeDatagrams.Add(uint64(w.first[k]))
	w.c.stats.gsoSends.Add(uint64(gso))
}

// plan fills the headers for msgs, in GSO runs when useGSO, and returns
// how many it filled. A message it cannot send (a bad address) ends the
// plan: the headers cover the messages before it, and the error is its.
func (w *writer) plan(msgs []Message, useGSO bool) (int, error) {
	nh, i := 0, 0
	for i < len(msgs) {
		m := &msgs[i]
		tx, err := w.txInfo(m)
		if err != nil {
			w.first[nh] = i
			return nh, err
		}
		size, seg := 1, len(m.Data)
		if useGSO {
			size = gsoRun(msgs[i:])
		}
		if size > 1 {
			tx.segment = seg
		}
		for j := i; j < i+size; j++ {
			iov := &w.iovs[j]
			if d := msgs[j].Data; len(d) > 0 {
				iov.Base = &d[0]
			} else {
				iov.Base = nil
			}
			iov.SetLen(len(msgs[j].Data))
		}
		h := &w.hdrs[nh]
		h.Len = 0
		h.Hdr.Flags = 0
		h.Hdr.Iov = &w.iovs[i]
		h.Hdr.SetIovlen(size)
		h.Hdr.Name, h.Hdr.Namelen = nil, 0
		if m.Addr.IsValid() {
			nl, err := putSockaddr(&w.names[nh], m.Addr, w.c.v6)
			if err != nil {
				w.first[nh] = i
				return nh, err
			}
			h.Hdr.Name = (*byte)(unsafe.Pointer(&w.names[nh]))
			h.Hdr.Namelen = nl
		}
		oob := w.oob[nh*sendOOBSize : (nh+1)*sendOOBSize]
		if cl := appendControl(oob, tx); cl > 0 {
			h.Hdr.Control = &oob[0]
			h.Hdr.SetControllen(cl)
		} else {
			h.Hdr.Control = nil
			h.Hdr.SetControllen(0)
		}
		w.first[nh] = i
		nh++
		i += size
	}
	w.first[nh] = i
	return nh, nil
}

// txInfo checks what m asks of the kernel beyond its payload.
func (w *writer) txInfo(m *Message) (txInfo, error) {
	tx := txInfo{local: m.Local, ifIndex: m.IfIndex}
	if w.c.caps.ECN {
		tx.ecn = m.ECN & 0b11
	}
	if m.Addr.IsValid() {
		tx.ipv4 = m.Addr.Addr().Unmap().Is4()
	} else {
		tx.ipv4 = !w.c.v6
	}
	if m.Local.IsValid() && m.Local.Unmap().Is4() != tx.ipv4 {
		return tx, fmt.Errorf("source %v for destination %v: %w", m.Local, m.Addr, syscall.EINVAL)
	}
	return tx, nil
}

// gsoRun counts how many datagrams from the start of msgs one GSO send can
// carry: same peer, codepoint and source; all of the first one's size but
// the last, which may be shorter; at most MaxGSOSegments and 64 KiB.
func gsoRun(msgs []Message) int {
	m := &msgs[0]
	seg := len(m.Data)
	total := seg
	n := 1
	for n < len(msgs) && n < MaxGSOSegments {
		o := &msgs[n]
		l := len(o.Data)
		if l == 0 || l > seg || total+l > maxGSOBytes ||
			o.Addr != m.Addr || o.ECN != m.ECN || o.Local != m.Local || o.IfIndex != m.IfIndex {
			break
		}
		n++
		total += l
		if l < seg {
			break // a short datagram is the last of a run
		}
	}
	return n
}

// send runs sendmmsg over headers [0, nh) until all are sent or one
// fails, and returns how many were sent with the error of the next.
func (w *writer) send(nh int) (int, error) {
	k := 0
	for k < nh {
		w.start, w.end = k, nh
		if err := w.c.raw.Write(w.callFn); err != nil {
			return k, err
		}
		if w.errno != 0 {
			return k, w.errno
		}
		if w.n <= 0 {
			return k, fmt.Errorf("sendmmsg sent nothing: %w", io.ErrNoProgress)
		}
		w.c.stats.writeCalls.Add(1)
		k += w.n
	}
	return k, nil
}

// call runs sendmmsg for RawConn.Write: false asks the poller to wait for
// room in the socket buffer and call again.
func (w *writer) call(fd uintptr) bool {
	for {
		n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&w.hdrs[w.start])), uintptr(w.end-w.start), unix.MSG_DONTWAIT, 0, 0)
		switch errno {
		case 0:
			w.n, w.errno = int(n), 0
			return true
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return false
		}
		w.n, w.errno = 0, errno
		return true
	}
}
