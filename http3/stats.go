package http3

import "sync/atomic"

// ServerStats reports what a Server's limits on request streams hold and
// what they refused or cut off since the Server started: the numbers to
// watch when clients open streams and send their requests slowly, or
// never finish them.
type ServerStats struct {
	// RequestMemory is the request data buffered now, as
	// MaxRequestMemory counts it.
	RequestMemory int64
	// ReadingHeaders is the number of request streams whose header is
	// being read now.
	ReadingHeaders int

	// Rejected counts request streams refused on arrival with
	// H3_REQUEST_REJECTED: their connection's MaxConnHeaderBytes or the
	// server's MaxRequestMemory was spent.
	Rejected uint64
	// Overflowed counts request streams reset while their header grew
	// (H3_REQUEST_REJECTED) or their trailers did (H3_EXCESSIVE_LOAD),
	// for the same reasons.
	Overflowed uint64
	// Evicted counts request streams whose incomplete header was reset
	// (H3_REQUEST_REJECTED), oldest first, to make room in
	// MaxRequestMemory for newer ones.
	Evicted uint64
	// HeaderTimeouts counts request streams reset with
	// H3_REQUEST_INCOMPLETE for want of a whole header within
	// ReadHeaderTimeout.
	HeaderTimeouts uint64
	// IdleReads counts request streams reset with H3_REQUEST_INCOMPLETE
	// after IdleStreamTimeout without a byte from the client while the
	// server waited for its header or body.
	IdleReads uint64
	// StalledWrites counts responses reset with H3_REQUEST_CANCELLED
	// after ResponseStallTimeout in which the client took no byte of
	// them.
	StalledWrites uint64

	// DatagramsUnknown counts HTTP datagrams dropped because no
	// extended CONNECT stream of their Quarter Stream ID was open (RFC
	// 9297 section 2.1 allows that or brief buffering).
	DatagramsUnknown uint64
	// DatagramsDropped counts HTTP datagrams dropped because their
	// stream's queue was full (1024 datagrams), or its connection's
	// streams held 4 MiB of datagrams together: the handlers did not
	// take them fast enough.
	DatagramsDropped uint64
}

// serverCounters are the counters of ServerStats.
type serverCounters struct {
	rejected, overflowed, evicted         atomic.Uint64
	headerTimeouts, idleReads, slowWrites atomic.Uint64
	datagrams                             datagramCounters
}

// Stats returns the Server's counters.
func (s *Server) Stats() ServerStats {
	s.mu.Lock()
	s.initLocked()
	m := s.mem
	s.mu.Unlock()
	used, reading := m.snapshot()
	c := &s.counters
	return ServerStats{
		RequestMemory:  used,
		ReadingHeaders: reading,
		Rejected:       c.rejected.Load(),
		Overflowed:     c.overflowed.Load(),
		Evicted:        c.evicted.Load(),
		HeaderTimeouts: c.headerTimeouts.Load(),
		IdleReads:      c.idleReads.Load(),
		StalledWrites:  c.slowWrites.Load(),

		DatagramsUnknown: c.datagrams.unknown.Load(),
		DatagramsDropped: c.datagrams.full.Load(),
	}
}
