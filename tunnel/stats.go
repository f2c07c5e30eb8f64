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
	// DownDrops counts packets read from the device and dropped because
	// no session was up (Config.NextSession, between a session's failure
	// and the next one), or left queued for the session that failed.
	DownDrops uint64 `json:"down_drops"`
	// SessionsLost counts the sessions that failed and were replaced or
	// waited for (Config.NextSession).
	SessionsLost uint64 `json:"sessions_lost"`
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
	// given to NewMulti; with Config.NextSession, the current (or last)
	// session's.
	Sessions []connectip.Stats `json:"sessions"`
	// Offload is the device's offload counters, for a device that has
	// them (a TUN interface).
	Offload *OffloadStats `json:"offload,omitempty"`
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
		OverloadDrops: s.overload.Load(), DownDrops: s.down.Load(), SessionsLost: s.lost.Load(), Refused: s.refused.Load(), ICMPToDevice: s.icmp.Load(),
		Delivered: s.delivered.snapshot(), DeviceWriteErrors: s.writeErrors.Load(),
	}
	for _, l := range f.lanes {
		st.Sessions = append(st.Sessions, l.session().Stats())
	}
	if d, ok := f.dev.(interface{ OffloadStats() OffloadStats }); ok {
		o := d.OffloadStats()
		st.Offload = &o
	}
	return st
}

type counters struct {
	deviceRead, tunneled, delivered      count
	overload, refused, icmp, writeErrors atomic.Uint64
	down, lost                           atomic.Uint64
}

type count struct{ packets, bytes atomic.Uint64 }

func (c *count) add(n int) {
	c.packets.Add(1)
	c.bytes.Add(uint64(n))
}

func (c *count) addN(packets, bytes int) {
	c.packets.Add(uint64(packets))
	c.bytes.Add(uint64(bytes))
}

func (c *count) snapshot() Count { return Count{Packets: c.packets.Load(), Bytes: c.bytes.Load()} }

// OffloadStats are a TUN device's offload counters (TUN.OffloadStats).
type OffloadStats struct {
	// Mode is "tso+uso" or "tso" when the kernel granted offloads, or
	// "off: " and the reason.
	Mode string `json:"mode"`
	// FramesRead counts reads from the device; SuperPacketsRead those
	// that were GSO super-packets cut into segments; PacketsRead the IP
	// packets the reads gave; BadFrames the frames (or segments) dropped
	// as malformed.
	FramesRead       uint64 `json:"frames_read"`
	SuperPacketsRead uint64 `json:"super_packets_read"`
	PacketsRead      uint64 `json:"packets_read"`
	BadFrames        uint64 `json:"bad_frames"`
	// PlainWrites counts packets written alone; CoalescedWrites the
	// writes of joined TCP segments, CoalescedPackets the segments they
	// held; WriteErrors the writes the kernel refused.
	PlainWrites      uint64 `json:"plain_writes"`
	CoalescedWrites  uint64 `json:"coalesced_writes"`
	CoalescedPackets uint64 `json:"coalesced_packets"`
	WriteErrors      uint64 `json:"write_errors"`
}
