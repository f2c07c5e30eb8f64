package connectip

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// WritePacket sends the IP packet p to the peer in an HTTP Datagram of
// Context ID 0 (RFC 9484 section 6). Before that it applies the checks of
// a router forwarding onto the tunnel (section 7.2): p must be one whole
// IPv4 or IPv6 packet, from an address the peer assigned to this end and
// to a route the peer advertised (each checked once the peer has sent the
// capsule), no larger than Config.MTU, and with hops left; unless
// Config.KeepHopLimit is set, its TTL or Hop Limit is decremented in p.
//
// IPv4 packets are not fragmented: one larger than the MTU is answered
// with Fragmentation Needed whether or not it has DF set, which makes the
// sender's IP layer learn the tunnel's MTU just the same.
//
// A packet that fails a check is counted and not sent, and the error wraps
// ErrDropped; icmp is then, where one is due, the ICMP error to deliver
// to the packet's sender (Packet Too Big, Time Exceeded). Any other error
// means the session has ended.
func (s *Session) WritePacket(p []byte) (icmp []byte, err error) {
	if s.ctx.Err() != nil {
		return nil, s.sessionErr(ErrClosed)
	}
	if icmp, err := s.check(p, s.pathLimit()); err != nil {
		return icmp, err
	}
	bp := s.bufs.Get().(*[]byte)
	b := AppendDatagram((*bp)[:0], ContextIDIP, p)
	err = s.c.SendDatagram(b)
	*bp = b[:0]
	s.bufs.Put(bp)
	if err != nil {
		return nil, s.sessionErr(fmt.Errorf("connectip: sending a datagram: %w", err))
	}
	s.stats.sent.forwarded(len(p))
	return nil, nil
}

// batchCarrier is a Carrier that sends several datagrams in one call:
// how many it sent, and the error that stopped it.
type batchCarrier interface {
	SendDatagrams(bs [][]byte) (int, error)
}

// waitingCarrier is a Carrier that sends several datagrams in one call
// and waits for room in its send queue until ctx ends.
type waitingCarrier interface {
	SendDatagramsWait(ctx context.Context, bs [][]byte) (int, error)
}

// WritePackets sends pkts as WritePacket sends each, and hands those that
// pass the checks to the carrier in one call where it takes several
// (SendDatagrams), so that the QUIC connection packs them together. A
// client's session waits for room in the carrier's send queue where the
// carrier can (SendDatagramsWait) rather than have it drop older
// datagrams.
// refused is called, in order, for each packet not sent, with its index,
// the ICMP error due (or nil) and an error wrapping ErrDropped. An error
// returned means the session has ended.
func (s *Session) WritePackets(pkts [][]byte, refused func(i int, icmp []byte, err error)) error {
	if s.ctx.Err() != nil {
		return s.sessionErr(ErrClosed)
	}
	size := 0
	for _, p := range pkts {
		size += 1 + len(p)
	}
	if pc, ok := s.c.(prefixedCarrier); ok {
		return s.writePrefixed(pc, pkts, refused)
	}
	bp := s.bufs.Get().(*[]byte)
	buf := (*bp)[:0]
	if cap(buf) < size {
		buf = make([]byte, 0, size)
	}
	dgrams := make([][]byte, 0, len(pkts))
	limit := s.pathLimit()
	for i, p := range pkts {
		if icmp, err := s.check(p, limit); err != nil {
			refused(i, icmp, err)
			continue
		}
		start := len(buf)
		buf = AppendDatagram(buf, ContextIDIP, p)
		dgrams = append(dgrams, buf[start:])
	}
	err := s.sendDatagrams(dgrams)
	*bp = buf[:0]
	s.bufs.Put(bp)
	return err
}

// prefixedCarrier is a Carrier that puts a prefix in front of each
// datagram of a batch as its connection queues them
// (http3.Stream.SendPrefixedDatagrams): the packets then go with their
// Context ID without a copy here.
type prefixedCarrier interface {
	SendPrefixedDatagrams(prefix []byte, bs [][]byte) (int, error)
	SendPrefixedDatagramsWait(ctx context.Context, prefix []byte, bs [][]byte) (int, error)
}

// ipContextPrefix is the Context ID of IP packets (0, RFC 9484 section
// 6) as a varint.
var ipContextPrefix = AppendDatagram(nil, ContextIDIP, nil)

// writePrefixed is WritePackets over a prefixedCarrier.
func (s *Session) writePrefixed(pc prefixedCarrier, pkts [][]byte, refused func(i int, icmp []byte, err error)) error {
	ok := make([][]byte, 0, len(pkts))
	limit := s.pathLimit()
	for i, p := range pkts {
		if icmp, err := s.check(p, limit); err != nil {
			refused(i, icmp, err)
			continue
		}
		ok = append(ok, p)
	}
	for len(ok) > 0 {
		var n int
		var err error
		if s.waits {
			n, err = pc.SendPrefixedDatagramsWait(s.ctx, ipContextPrefix, ok)
		} else {
			n, err = pc.SendPrefixedDatagrams(ipContextPrefix, ok)
		}
		if err != nil {
			return s.sessionErr(fmt.Errorf("connectip: sending a datagram: %w", err))
		}
		for _, p := range ok[:n] {
			s.stats.sent.forwarded(len(p))
		}
		ok = ok[n:]
	}
	return nil
}

// sendDatagrams sends IP packets framed as HTTP datagram payloads and
// counts them.
func (s *Session) sendDatagrams(dgrams [][]byte) error {
	bc, batches := s.c.(batchCarrier)
	wc, waits := s.c.(waitingCarrier)
	waits = waits && s.waits
	for len(dgrams) > 0 {
		n, err := 1, error(nil)
		switch {
		case waits:
			n, err = wc.SendDatagramsWait(s.ctx, dgrams)
		case batches:
			n, err = bc.SendDatagrams(dgrams)
		default:
			err = s.c.SendDatagram(dgrams[0])
		}
		if err != nil {
			return s.sessionErr(fmt.Errorf("connectip: sending a datagram: %w", err))
		}
		for _, d := range dgrams[:n] {
			s.stats.sent.forwarded(len(d) - 1) // less the Context ID
		}
		dgrams = dgrams[n:]
	}
	return nil
}

// check applies the forwarding checks to p before it is sent (and
// decrements its hop limit): nil when it may go, otherwise an error
// wrapping ErrDropped, with the ICMP error due if any. limit is the
// carrier's pathLimit.
func (s *Session) check(p []byte, limit int) (icmp []byte, err error) {
	d := &s.stats.sent
	h, err := ParseIPHeader(p)
	if err != nil {
		d.malformed.Add(1)
		return nil, fmt.Errorf("%w: %w", ErrDropped, err)
	}
	mtu := s.packetMTU(limit, h.Version)
	s.mu.Lock()
	srcOK := !s.gotAssign || sourceAllowed(s.local, h.Src)
	dstOK := !s.peerAdvertised || routeAllowed(s.peerRoutes, h.Dst, h.Protocol)
	s.mu.Unlock()
	switch {
	case !srcOK:
		d.source.Add(1)
		return nil, fmt.Errorf("%w: source %v is not an address assigned to this end", ErrDropped, h.Src)
	case !dstOK:
		d.dest.Add(1)
		return nil, fmt.Errorf("%w: no route to %v for protocol %d", ErrDropped, h.Dst, h.Protocol)
	case len(p) > mtu:
		d.tooBig.Add(1)
		icmp, _ = PacketTooBig(p, mtu, s.icmpSource(h))
		return icmp, fmt.Errorf("%w: %d bytes exceed the tunnel MTU of %d", ErrDropped, len(p), mtu)
	case !s.cfg.KeepHopLimit && !decrementHopLimit(p):
		d.hopLimit.Add(1)
		icmp, _ = TimeExceeded(p, s.icmpSource(h))
		return icmp, fmt.Errorf("%w: hop limit exceeded", ErrDropped)
	}
	return nil, nil
}

// icmpSource is the source of the ICMP errors about a packet like h.
func (s *Session) icmpSource(h IPHeader) netip.Addr {
	if h.Version == 4 {
		return s.cfg.ICMPSource4
	}
	return s.cfg.ICMPSource6
}

// TryReadPacket is ReadPacket without the wait: false when no datagram
// is waiting now, or when the carrier cannot tell (it has neither
// TryReadDatagram nor TryReceiveDatagram). A datagram that is not
// forwarded is skipped as ReadPacket skips it.
func (s *Session) TryReadPacket(b []byte) (int, bool, error) {
	if dr, ok := s.c.(datagramReader); ok {
		return s.tryReadCopied(dr, b)
	}
	tr, ok := s.c.(interface{ TryReceiveDatagram() ([]byte, bool) })
	if !ok {
		return 0, false, nil
	}
	for {
		dgram, ok := tr.TryReceiveDatagram()
		if !ok {
			return 0, false, nil
		}
		if n, ok, err := s.deliver(dgram, b); ok {
			return n, true, err
		}
	}
}

// ReadPacket waits for the next IP packet from the peer and copies it into
// b. Datagrams that fail the checks of a router receiving from the tunnel
// (section 7.2: one whole IP packet, from an address this end assigned to
// the peer, each checked once this end has sent the capsule, and to a
// route this end advertised or an address the peer assigned to it) are
// dropped and counted, as are datagrams of an
// unregistered Context ID; ReadPacket then waits for the next one. A b
// too short for the packet gives io.ErrShortBuffer with b filled. Any
// other error means the session has ended.
func (s *Session) ReadPacket(b []byte) (int, error) {
	if dr, ok := s.c.(datagramReader); ok {
		return s.readCopied(dr, b)
	}
	for {
		dgram, err := s.c.ReceiveDatagram(s.ctx)
		if err != nil {
			return 0, s.sessionErr(fmt.Errorf("connectip: receiving a datagram: %w", err))
		}
		if n, ok, err := s.deliver(dgram, b); ok {
			return n, err
		}
	}
}

// datagramReader is a Carrier that copies each datagram's payload into a
// buffer of the caller's (http3.Stream.ReadDatagram), so that its own
// buffer is reused rather than a new one allocated per datagram. A buffer
// too short gives io.ErrShortBuffer with the buffer filled.
type datagramReader interface {
	ReadDatagram(ctx context.Context, b []byte) (int, error)
	TryReadDatagram(b []byte) (int, bool, error)
}

// maxDatagram bounds the HTTP datagrams a session reads whole: a QUIC
// DATAGRAM frame fits in one UDP datagram.
const maxDatagram = 65535

// readCopied is ReadPacket over a datagramReader.
func (s *Session) readCopied(dr datagramReader, b []byte) (int, error) {
	bp := s.readBufs.Get().(*[]byte)
	defer s.readBufs.Put(bp)
	for {
		n, err := dr.ReadDatagram(s.ctx, *bp)
		if errors.Is(err, io.ErrShortBuffer) {
			s.stats.received.malformed.Add(1) // no IP packet is that long
			continue
		}
		if err != nil {
			return 0, s.sessionErr(fmt.Errorf("connectip: receiving a datagram: %w", err))
		}
		if n, ok, err := s.deliver((*bp)[:n], b); ok {
			return n, err
		}
	}
}

// tryReadCopied is TryReadPacket over a datagramReader.
func (s *Session) tryReadCopied(dr datagramReader, b []byte) (int, bool, error) {
	bp := s.readBufs.Get().(*[]byte)
	defer s.readBufs.Put(bp)
	for {
		n, ok, err := dr.TryReadDatagram(*bp)
		if !ok {
			return 0, false, nil
		}
		if errors.Is(err, io.ErrShortBuffer) {
			s.stats.received.malformed.Add(1)
			continue
		}
		if err != nil {
			return 0, true, s.sessionErr(fmt.Errorf("connectip: receiving a datagram: %w", err))
		}
		if n, ok, err := s.deliver((*bp)[:n], b); ok {
			return n, true, err
		}
	}
}

// deliver copies the IP packet of a datagram from the peer into b if it
// passes the checks (admit): ok false when it did not.
func (s *Session) deliver(dgram, b []byte) (n int, ok bool, err error) {
	p, ok := s.admit(dgram)
	if !ok {
		return 0, false, nil
	}
	n = copy(b, p)
	s.stats.received.forwarded(len(p))
	if n < len(p) {
		return n, true, io.ErrShortBuffer
	}
	return n, true, nil
}

// destinationAllowed reports whether a packet from the peer may go to h's
// destination: within the routes this end advertised, or to one of the
// addresses the peer assigned to this end; with neither sent, anywhere.
// A client therefore takes from its proxy only packets for its own
// addresses, and never forwards others into its network. s.mu is held.
func (s *Session) destinationAllowed(h IPHeader) bool {
	if !s.advertised && !s.gotAssign {
		return true
	}
	return s.advertised && routeAllowed(s.routes, h.Dst, h.Protocol) ||
		s.gotAssign && sourceAllowed(s.local, h.Dst)
}

// admit returns the IP packet a datagram from the peer carries and true,
// or false after counting why it is dropped or handing it to the handler
// of its context.
func (s *Session) admit(dgram []byte) ([]byte, bool) {
	d := &s.stats.received
	id, p, err := ParseDatagram(dgram)
	if err != nil {
		d.malformed.Add(1)
		return nil, false
	}
	if id != ContextIDIP {
		s.mu.Lock()
		fn := s.handlers[id]
		s.mu.Unlock()
		if fn == nil {
			d.unknownCtx.Add(1)
		} else {
			fn(p)
		}
		return nil, false
	}
	h, err := ParseIPHeader(p)
	if err != nil {
		d.malformed.Add(1)
		return nil, false
	}
	s.mu.Lock()
	srcOK := !s.assignedSent || sourceAllowed(s.assigned, h.Src)
	dstOK := s.destinationAllowed(h)
	s.mu.Unlock()
	switch {
	case !srcOK:
		d.source.Add(1)
		return nil, false
	case !dstOK:
		d.dest.Add(1)
		return nil, false
	}
	return p, true
}
