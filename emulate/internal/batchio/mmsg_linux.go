package batchio

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// batch holds the kernel-facing headers of one direction of a Conn, reused
// from call to call so that a batch allocates nothing.
type batch struct {
	hdrs  []unix.Mmsghdr
	iovs  []unix.Iovec
	names []unix.RawSockaddrAny
}

func (b *batch) grow(n int) {
	if cap(b.hdrs) < n {
		b.hdrs = make([]unix.Mmsghdr, n)
		b.iovs = make([]unix.Iovec, n)
		b.names = make([]unix.RawSockaddrAny, n)
	}
	b.hdrs, b.iovs, b.names = b.hdrs[:n], b.iovs[:n], b.names[:n]
}

// prepare points header i at msgs[i].Buf and, for reads, at room for the
// source address.
func (b *batch) prepare(msgs []Message, read bool) {
	b.grow(len(msgs))
	for i := range msgs {
		b.hdrs[i] = unix.Mmsghdr{}
		iov := &b.iovs[i]
		iov.Base = nil
		if len(msgs[i].Buf) > 0 {
			iov.Base = &msgs[i].Buf[0]
		}
		iov.SetLen(len(msgs[i].Buf))
		h := &b.hdrs[i].Hdr
		h.Iov = iov
		h.Iovlen = 1
		if read {
			h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
			h.Namelen = uint32(unsafe.Sizeof(b.names[i]))
		}
	}
}

func (b *batch) prepareWrite(msgs []Message) error {
	b.prepare(msgs, false)
	for i := range msgs {
		if !msgs[i].Addr.IsValid() {
			continue
		}
		n, err := encodeSockaddr(&b.names[i], msgs[i].Addr)
		if err != nil {
			return err
		}
		h := &b.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		h.Namelen = n
	}
	return nil
}

func (b *batch) finishRead(msgs []Message) {
	for i := range msgs {
		msgs[i].N = int(b.hdrs[i].Len)
		msgs[i].Truncated = b.hdrs[i].Hdr.Flags&unix.MSG_TRUNC != 0
		msgs[i].Addr = decodeSockaddr(&b.names[i])
	}
}

func recvmmsg(fd uintptr, hdrs []unix.Mmsghdr) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func sendmmsg(fd uintptr, hdrs []unix.Mmsghdr) (int, error) {
	n, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// encodeSockaddr writes a into sa and returns the length the kernel needs.
// The port goes in network byte order, hence the explicit big-endian writes.
func encodeSockaddr(sa *unix.RawSockaddrAny, a netip.AddrPort) (uint32, error) {
	ip := a.Addr()
	switch {
	case ip.Is4():
		s := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		*s = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: ip.As4()}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&s.Port))[:], a.Port())
		return unix.SizeofSockaddrInet4, nil
	case ip.Is6():
		s := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		*s = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: ip.As16()}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&s.Port))[:], a.Port())
		return unix.SizeofSockaddrInet6, nil
	}
	return 0, fmt.Errorf("destination %v: %w", a, syscall.EAFNOSUPPORT)
}

func decodeSockaddr(sa *unix.RawSockaddrAny) netip.AddrPort {
	switch sa.Addr.Family {
	case unix.AF_INET:
		s := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&s.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(s.Addr), port)
	case unix.AF_INET6:
		s := (*unix.RawSockaddrInet6)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&s.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom16(s.Addr).Unmap(), port)
	}
	return netip.AddrPort{}
}
