//go:build linux

package emulate

import (
	"net/netip"
	"time"

	"github.com/satquic/satquic/emulate/internal/batchio"
	"github.com/satquic/satquic/netsim"
)

// relayOut is the part the two relay sinks share: it turns a delivered,
// trailed buffer back into a datagram of a live flow, and records it.
type relayOut struct {
	r     *Relay
	dir   *direction
	pcap  *pcapWriter
	msgs  []batchio.Message
	hdr   []byte
	flows []*flow
}

// unpack checks a delivered buffer and returns its payload and flow, or
// nil when it cannot be delivered.
func (o *relayOut) unpack(dl netsim.Delivery, now time.Duration) ([]byte, *flow) {
	st := o.dir.stats
	payload, tr, ok := splitTrailer(dl.Data, o.r.overhead)
	if !ok {
		st.unroutable()
		return nil, nil
	}
	// Relay sockets send Not-ECT datagrams, so a congestion mark becomes
	// a drop, as a router does for a sender without ECN (RFC 3168 sec. 7).
	if dl.CE {
		st.unroutable()
		return nil, nil
	}
	f := o.r.flows.byFlowID(tr.flow)
	if f == nil {
		st.unroutable()
		return nil, nil
	}
	st.sojournOf(now - tr.arrival)
	return payload, f
}

func (o *relayOut) capture(now time.Duration, src, dst netip.AddrPort, payload []byte) {
	if o.pcap == nil {
		return
	}
	o.hdr = appendIPUDPHeader(o.hdr[:0], src, dst, payload)
	o.pcap.write(o.r.clk.Epoch.Add(now), o.hdr, payload)
}

// write sends msgs on c, skipping (and counting) a datagram the kernel
// refuses so that one bad destination does not hold up the rest.
func (o *relayOut) write(c *batchio.Conn, msgs []batchio.Message) {
	st := o.dir.stats
	for len(msgs) > 0 {
		n, err := c.WriteBatch(msgs)
		for _, m := range msgs[:n] {
			st.sent(len(m.Buf) + o.r.overhead)
		}
		msgs = msgs[n:]
		if err != nil && len(msgs) > 0 {
			st.sendError()
			msgs = msgs[1:]
		}
	}
}

func (o *relayOut) recycle(batch []netsim.Delivery) {
	for _, dl := range batch {
		o.r.pool.put(dl.Data)
	}
}

// upSink writes uplink datagrams to the upstream server, each from its
// flow's own socket.
type upSink struct{ *relayOut }

func (s upSink) send(batch []netsim.Delivery) {
	now := s.r.clk.Now()
	s.msgs, s.flows = s.msgs[:0], s.flows[:0]
	for _, dl := range batch {
		payload, f := s.unpack(dl, now)
		if f == nil {
			continue
		}
		s.capture(now, f.client, s.r.upstream.AddrPort(), payload)
		s.msgs = append(s.msgs, batchio.Message{Buf: payload})
		s.flows = append(s.flows, f)
	}
	// Consecutive datagrams of one flow go out in one system call.
	for start := 0; start < len(s.msgs); {
		end := start + 1
		for end < len(s.msgs) && s.flows[end] == s.flows[start] {
			end++
		}
		s.write(s.flows[start].conn, s.msgs[start:end])
		start = end
	}
	s.recycle(batch)
}

// downSink writes downlink datagrams to the clients from the listening
// socket, which is the address they sent to.
type downSink struct{ *relayOut }

func (s downSink) send(batch []netsim.Delivery) {
	now := s.r.clk.Now()
	s.msgs = s.msgs[:0]
	for _, dl := range batch {
		payload, f := s.unpack(dl, now)
		if f == nil {
			continue
		}
		s.capture(now, s.r.upstream.AddrPort(), f.client, payload)
		s.msgs = append(s.msgs, batchio.Message{Buf: payload, Addr: f.client})
	}
	s.write(s.r.listen, s.msgs)
	s.recycle(batch)
}
