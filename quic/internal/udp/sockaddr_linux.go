//go:build linux && !purego

package udp

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sockaddr is room for the address of a UDP peer, IPv4 or IPv6: the
// kernel writes either form into it and reads either from it.
type sockaddr = unix.RawSockaddrInet6

// putSockaddr writes a into sa in the form the socket expects and returns
// its length. An AF_INET6 socket takes IPv4 peers as v4-mapped addresses;
// an AF_INET socket takes v4-mapped ones as plain IPv4.
func putSockaddr(sa *sockaddr, a netip.AddrPort, v6 bool) (uint32, error) {
	ip := a.Addr()
	port := (*[2]byte)(unsafe.Pointer(&sa.Port))
	if v6 {
		if !ip.IsValid() {
			return 0, fmt.Errorf("destination %v: %w", a, syscall.EDESTADDRREQ)
		}
		*sa = sockaddr{Family: unix.AF_INET6, Addr: ip.As16()}
		binary.BigEndian.PutUint16(port[:], a.Port())
		return unix.SizeofSockaddrInet6, nil
	}
	ip = ip.Unmap()
	if !ip.Is4() {
		return 0, fmt.Errorf("destination %v on an IPv4 socket: %w", a, syscall.EAFNOSUPPORT)
	}
	s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
	*s4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: ip.As4()}
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&s4.Port))[:], a.Port())
	return unix.SizeofSockaddrInet4, nil
}

// sockaddrAddrPort reads the peer the kernel wrote into sa, with IPv4
// peers of a dual-stack socket unmapped, so that a peer has one form.
func sockaddrAddrPort(sa *sockaddr) netip.AddrPort {
	switch sa.Family {
	case unix.AF_INET:
		s4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&s4.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom4(s4.Addr), port)
	case unix.AF_INET6:
		port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), port)
	}
	return netip.AddrPort{}
}
