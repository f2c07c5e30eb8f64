package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// Stats are a connection's counters and its path estimates.
type Stats struct {
	SmoothedRTT, MinRTT, LatestRTT, RTTVar time.Duration
	CongestionWindow                       int
	BytesInFlight                          int64
	PacingRate                             uint64 // bytes per second
	// Controller is the congestion controller's state: its algorithm,
	// phase and, for BBR, its state and model.
	Controller recovery.ControllerState

	DatagramsSent, DatagramsReceived uint64
	BytesSent, BytesReceived         uint64 // UDP payload bytes
	PacketsSent, PacketsReceived     uint64
	// PacketsLost counts packets declared lost; PacketsRetransmitted
	// those among them whose content was queued again.
	PacketsLost, PacketsRetransmitted uint64
	// PacketsDropped counts received packets that could not be
	// processed (no keys, bad header, failed decryption, or from an
	// address other than the peer's before it was validated);
	// PacketsDuplicate those received twice.
	PacketsDropped, PacketsDuplicate uint64
	DecryptionFailures               uint64
	// PacketsBuffered counts packets kept until their keys arrived
	// (RFC 9001 section 5.7).
	PacketsBuffered uint64
	// StreamBytesRetransmitted counts stream bytes sent more than once.
	StreamBytesRetransmitted uint64
	// StreamBytesUnacked is the stream data written and not yet
	// acknowledged, over the streams whose sending part was not reset:
	// zero once the peer has everything the application sent.
	StreamBytesUnacked uint64
	ProbesSent         uint64
	KeyUpdates         uint64

	// SpuriousRetransmissions counts packets whose content was sent again
	// although the peer had it: declared lost and then acknowledged, or
	// rebuilt by the peer's FEC after their loss was declared.
	SpuriousRetransmissions uint64

	// Recovery holds the loss detector's counters (PTOs, spurious losses,
	// congestion signals, packets the peer recovered with FEC).
	Recovery recovery.Stats
	// FEC counts the connection's forward erasure correction work.
	FEC FECStats
	// ECN is the state of ECN on the path and its counters.
	ECN ECNStats
	// PathMTU is the datagram size and the work of path MTU discovery.
	PathMTU PathMTUStats
	// CarefulResume is the phase of Careful Resume and the BDP frames'
	// counters.
	CarefulResume CarefulResumeStats
	// Datagrams counts DATAGRAM frames (datagram.go).
	Datagrams DatagramStats
	// AckFrequency is the ACK frequency extension's negotiation, requests
	// and counters.
	AckFrequency AckFrequencyStats
	// Path counts the peer's address changes, path validations and
	// migrations (path.go, migration.go).
	Path PathStats
}

// connStats is the part of Stats the connection counts itself: the rest
// comes from its sub-states when Stats is called, so that a connection
// does not carry a whole Stats (about 1 kB) for a dozen counters.
type connStats struct {
	DatagramsSent, DatagramsReceived     uint64
	BytesSent, BytesReceived             uint64
	PacketsSent, PacketsReceived         uint64
	PacketsLost, PacketsRetransmitted    uint64
	PacketsDropped, PacketsDuplicate     uint64
	DecryptionFailures, PacketsBuffered  uint64
	StreamBytesRetransmitted, ProbesSent uint64
}

// Stats returns the counters and the current RTT and window estimates.
func (c *Conn) Stats() Stats {
	cs := &c.stats
	s := Stats{
		DatagramsSent: cs.DatagramsSent, DatagramsReceived: cs.DatagramsReceived,
		BytesSent: cs.BytesSent, BytesReceived: cs.BytesReceived,
		PacketsSent: cs.PacketsSent, PacketsReceived: cs.PacketsReceived,
		PacketsLost: cs.PacketsLost, PacketsRetransmitted: cs.PacketsRetransmitted,
		PacketsDropped: cs.PacketsDropped, PacketsDuplicate: cs.PacketsDuplicate,
		DecryptionFailures: cs.DecryptionFailures, PacketsBuffered: cs.PacketsBuffered,
		StreamBytesRetransmitted: cs.StreamBytesRetransmitted, ProbesSent: cs.ProbesSent,
	}
	rtt := c.sender.RTT()
	s.SmoothedRTT, s.MinRTT, s.LatestRTT, s.RTTVar = rtt.SmoothedRTT(), rtt.MinRTT(), rtt.LatestRTT(), rtt.RTTVar()
	s.CongestionWindow = c.sender.CongestionWindow()
	s.BytesInFlight = c.sender.BytesInFlight()
	s.PacingRate = c.sender.PacingRate()
	s.Controller = c.sender.ControllerState()
	s.KeyUpdates = c.ku.updates
	s.Recovery = c.sender.Stats()
	s.SpuriousRetransmissions = s.Recovery.SpuriousLosses + s.Recovery.RecoveredAfterLoss
	s.FEC = c.fec.stats()
	s.ECN = c.ecn.stats()
	s.PathMTU = c.pmtu.report(c.maxDatagram)
	s.CarefulResume = c.bdp.report()
	s.AckFrequency = c.ackFreq.stats()
	s.Path = c.pathStats()
	s.StreamBytesUnacked = c.streams.unackedBytes()
	s.Datagrams = c.dgram.stats
	return s
}
