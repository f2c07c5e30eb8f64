package http3

import (
	"net/http"
	"time"
)

// The defaults of the Server's limits on what clients may hold. They
// protect a server from clients that open request streams and then send
// their requests slowly or never (slowloris), or send most of a large
// header and never finish it: each such stream holds a goroutine, a
// buffer and a slot of the connection's stream limit until it ends.
const (
	// DefaultReadHeaderTimeout bounds the time a request stream takes to
	// deliver its HEADERS frame. A request's header is one flight of
	// packets: even over a GEO satellite (600 ms round trips) that loses
	// the flight several times, it arrives in a few seconds.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultIdleStreamTimeout bounds how long the server waits for a
	// byte of a request: twice the QUIC idle timeout, so that a client
	// whose link went silent loses its connection first, as nginx's
	// client_body_timeout does.
	DefaultIdleStreamTimeout = 60 * time.Second
	// DefaultResponseStallTimeout bounds how long a response waits for
	// the client's flow control. It is longer because a client's QUIC
	// stack grants credit in steps of half its stream window (RFC 9000
	// section 4.2 leaves the timing to it): 4 MiB for satquic's client,
	// about 3 MB for browsers. A client that reads steadily but slower
	// than one such step per timeout looks stalled: five minutes lets
	// a player read at 128 kbit/s.
	DefaultResponseStallTimeout = 5 * time.Minute
	// DefaultMaxRequestMemory is the default budget of what a Server's
	// request streams hold: 5461 streams whose header is awaited (12 KiB
	// each), or 16 connections each at its default header bound, or the
	// read buffers of 16384 request bodies.
	DefaultMaxRequestMemory = 64 << 20
	// minConnHeaderBytes is the least default per-connection bound: room
	// for the read buffers of 256 request streams at once, whatever
	// MaxHeaderBytes is.
	minConnHeaderBytes = 1 << 20
)

// readHeaderTimeout returns ReadHeaderTimeout with its default; 0 means
// no limit.
func (s *Server) readHeaderTimeout() time.Duration {
	return durationOrDefault(s.ReadHeaderTimeout, DefaultReadHeaderTimeout)
}

// idleStreamTimeout returns IdleStreamTimeout with its default; 0 means
// no limit.
func (s *Server) idleStreamTimeout() time.Duration {
	return durationOrDefault(s.IdleStreamTimeout, DefaultIdleStreamTimeout)
}

// durationOrDefault maps a limit's zero to def and a negative one to 0,
// no limit.
func durationOrDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// responseStallTimeout returns ResponseStallTimeout with its default; 0
// means no limit.
func (s *Server) responseStallTimeout() time.Duration {
	return durationOrDefault(s.ResponseStallTimeout, DefaultResponseStallTimeout)
}

// maxConnHeaderBytes returns MaxConnHeaderBytes with its default: four
// times MaxHeaderBytes, which lets a connection read two headers of the
// largest encoded size (twice MaxHeaderBytes: see readRequest) at once,
// and at least minConnHeaderBytes. A negative result means no bound.
func (s *Server) maxConnHeaderBytes() int64 {
	switch {
	case s.MaxConnHeaderBytes < 0:
		return -1
	case s.MaxConnHeaderBytes > 0:
		return int64(s.MaxConnHeaderBytes)
	}
	return max(4*int64(s.maxHeaderBytes()), minConnHeaderBytes)
}

// maxRequestMemory returns MaxRequestMemory with its default; a negative
// result means no limit.
func (s *Server) maxRequestMemory() int64 {
	switch {
	case s.MaxRequestMemory < 0:
		return -1
	case s.MaxRequestMemory > 0:
		return s.MaxRequestMemory
	}
	return DefaultMaxRequestMemory
}

func (s *Server) maxHeaderBytes() uint64 {
	if s.MaxHeaderBytes > 0 {
		return uint64(s.MaxHeaderBytes)
	}
	return http.DefaultMaxHeaderBytes
}
