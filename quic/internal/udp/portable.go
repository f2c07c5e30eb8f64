package udp

import (
	"io"
	"net"
	"net/netip"
)

// addrPortConn is the allocation-free addressing of *net.UDPConn, which
// netsim/memnet's Conn offers too.
type addrPortConn interface {
	ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error)
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// portable moves datagrams one at a time through the net.PacketConn
// interface: one ReadFrom per ReadBatch (a PacketConn cannot tell whether
// a second read would block) and one WriteTo per datagram.
type portable struct {
	pc    net.PacketConn
	ap    addrPortConn // nil when pc lacks the AddrPort methods
	w     io.Writer    // for a connected socket, when pc has Write
	caps  Capabilities
	stats *counters

	// The last destination converted to a net.Addr, so that WriteTo on a
	// plain PacketConn allocates only when the peer changes.
	lastPeer netip.AddrPort
	lastAddr net.Addr
}

func newPortable(pc net.PacketConn, caps Capabilities, st *counters) *portable {
	p := &portable{pc: pc, caps: caps, stats: st}
	p.caps.Batch, p.caps.GSO, p.caps.GRO, p.caps.ECN, p.caps.PacketInfo = false, false, false, false, false
	p.ap, _ = pc.(addrPortConn)
	p.w, _ = pc.(io.Writer)
	return p
}

func (p *portable) capabilities() Capabilities { return p.caps }

// pending is always false: one datagram is read at a time, into one Buf.
func (p *portable) pending() bool { return false }

func (p *portable) readBatch(msgs []Message) (int, error) {
	var buf []byte
	bufIndex := 0
	for i := range msgs {
		if len(msgs[i].Buf) > 0 {
			buf, bufIndex = msgs[i].Buf, i
			break
		}
	}
	if buf == nil {
		return 0, errNoBuffer
	}
	var (
		n    int
		peer netip.AddrPort
		err  error
	)
	if p.ap != nil {
		n, peer, err = p.ap.ReadFromUDPAddrPort(buf)
	} else {
		var from net.Addr
		n, from, err = p.pc.ReadFrom(buf)
		peer = addrPortOf(from)
	}
	if err != nil {
		return 0, err
	}
	msgs[0] = Message{
		Buf:      msgs[0].Buf,
		Data:     buf[:n],
		BufIndex: bufIndex,
		Addr:     netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port()),
	}
	p.stats.readCalls.Add(1)
	p.stats.readDatagrams.Add(1)
	return 1, nil
}

func (p *portable) writeBatch(msgs []Message) (int, error) {
	sent := 0
	var err error
	for i := range msgs {
		switch {
		case !msgs[i].Addr.IsValid() && p.w != nil:
			// No destination: the socket's peer, if it is connected.
			_, err = p.w.Write(msgs[i].Data)
		case p.ap != nil:
			_, err = p.ap.WriteToUDPAddrPort(msgs[i].Data, msgs[i].Addr)
		default:
			_, err = p.pc.WriteTo(msgs[i].Data, p.netAddr(msgs[i].Addr))
		}
		if err != nil {
			break
		}
		sent++
	}
	p.stats.writeCalls.Add(uint64(sent))
	p.stats.writeDatagrams.Add(uint64(sent))
	return sent, err
}

func (p *portable) netAddr(a netip.AddrPort) net.Addr {
	if p.lastAddr == nil || a != p.lastPeer {
		p.lastPeer, p.lastAddr = a, net.UDPAddrFromAddrPort(a)
	}
	return p.lastAddr
}

// addrPortOf converts the source address a PacketConn reported.
func addrPortOf(a net.Addr) netip.AddrPort {
	switch a := a.(type) {
	case *net.UDPAddr:
		return a.AddrPort()
	case interface{ AddrPort() netip.AddrPort }:
		return a.AddrPort()
	}
	if a == nil {
		return netip.AddrPort{}
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.AddrPort{}
	}
	return ap
}
