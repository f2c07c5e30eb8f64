package quic

import "time"

// ConnectionStats are a connection's path estimates and counters.
type ConnectionStats struct {
	// HandshakeDuration is how long the handshake took, from the start
	// of the connection (0 until it completed).
	HandshakeDuration time.Duration

	SmoothedRTT, MinRTT, LatestRTT, RTTVariance time.Duration
	// CongestionWindow and BytesInFlight are in bytes; PacingRate in
	// bytes per second.
	CongestionWindow int
	BytesInFlight    int64
	PacingRate       uint64

	// UDP datagrams and their payload bytes.
	DatagramsSent, DatagramsReceived uint64
	BytesSent, BytesReceived         uint64
	PacketsSent, PacketsReceived     uint64
	// PacketsLost counts packets declared lost, PacketsRetransmitted
	// those whose content was sent again, SpuriousLosses those
	// declared lost and acknowledged later.
	PacketsLost, PacketsRetransmitted, SpuriousLosses uint64
	// StreamBytesRetransmitted counts stream bytes sent more than once.
	StreamBytesRetransmitted uint64
	// PTOs counts probe timeouts; PacketsDropped the received packets
	// that could not be processed.
	PTOs, PacketsDropped uint64
	KeyUpdates           uint64
	// SpuriousRetransmissions counts packets whose content was sent again
	// although the peer had it (declared lost then acknowledged, or
	// rebuilt by the peer's FEC after the loss was declared).
	SpuriousRetransmissions uint64
	// FEC counts forward erasure correction work (Config.FEC).
	FEC FECStats
}

// Stats returns the connection's statistics.
func (c *Conn) Stats() ConnectionStats {
	c.mu.Lock()
	s := c.core.Stats()
	hs := c.handshakeTime
	c.mu.Unlock()
	return ConnectionStats{
		HandshakeDuration:        hs,
		SmoothedRTT:              s.SmoothedRTT,
		MinRTT:                   s.MinRTT,
		LatestRTT:                s.LatestRTT,
		RTTVariance:              s.RTTVar,
		CongestionWindow:         s.CongestionWindow,
		BytesInFlight:            s.BytesInFlight,
		PacingRate:               s.PacingRate,
		DatagramsSent:            s.DatagramsSent,
		DatagramsReceived:        s.DatagramsReceived,
		BytesSent:                s.BytesSent,
		BytesReceived:            s.BytesReceived,
		PacketsSent:              s.PacketsSent,
		PacketsReceived:          s.PacketsReceived,
		PacketsLost:              s.PacketsLost,
		PacketsRetransmitted:     s.PacketsRetransmitted,
		SpuriousLosses:           s.Recovery.SpuriousLosses,
		StreamBytesRetransmitted: s.StreamBytesRetransmitted,
		PTOs:                     s.Recovery.PTOs,
		PacketsDropped:           s.PacketsDropped,
		KeyUpdates:               s.KeyUpdates,
		SpuriousRetransmissions:  s.SpuriousRetransmissions,
		FEC:                      fecStats(&s),
	}
}
