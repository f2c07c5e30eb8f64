package tunnel

import (
	"sync/atomic"

	"github.com/satquic/satquic/connectip"
)

// Stats are a Forwarder's counters. Its fields marshal to JSON as they
// are.
type Stats struct {
	// DeviceRead counts the packets read from the device; Tunneled those
	// of them the session sent to the peer.
	DeviceRead Count `json:"device_read"`
	Tunneled   Count `json:"tunneled"`
	// OverloadDrops counts packets read from the device and dropped
	// because the queue to the session was full: the transport could not
	// keep up.
	OverloadDrops uint64 `json:"overload_drops"`
	// Refused counts packets the session did not send (Session.Sent.Dropped
	// gives the reasons); ICMPToDevice the ICMP errors about them written
	// back into the device.
	Refused      uint64 `json:"refused"`
	ICMPToDevice uint64 `json:"icmp_to_device"`
	// Delivered counts the packets written into the device, the session's
	// and the ICMP errors; DeviceWriteErrors those the device refused.
	Delivered         Count  `json:"delivered"`
	DeviceWriteErrors uint64 `json:"device_write_errors"`
	// Sessions are the CONNECT-IP sessions' own counters, in the order
	// given to NewMulti.
	Sessions []connectip.Stats `json:"sessions"`
}

// Count is a number of packets and their bytes.
type Count struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// Stats returns a snapshot of the counters.
func (f *Forwarder) Stats() Stats {
	s := &f.stats
	st := Stats{
		DeviceRead: s.deviceRead.snapshot(), Tunneled: s.tunneled.snapshot(),
		OverloadDrops: s.overload.Load(), Refused: s.refused.Load(), ICMPToDevice: s.icmp.Load(),
		Delivered: s.delivered.snapshot(), DeviceWriteErrors: s.writeErrors.Load(),
	}
	for _, l := range f.lanes {
		st.Sessions = append(st.Sessions, l.sess.Stats())
	}
	return st
}

type counters struct {
	deviceRead, tunneled, delivered      count
	overload, refused, icmp, writeErrors atomic.Uint64
}

type count struct{ packets, bytes atomic.Uint64 }

func (c *count) add(n int) {
	c.packets.Add(1)
	c.bytes.Add(uint64(n))
}

func (c *count) snapshot() Count { return Count{Packets: c.packets.Load(), Bytes: c.bytes.Load()} }
