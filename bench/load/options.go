package load

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/satquic/satquic/quic"
)

// Options describe one load run. Workers and one of Requests or Duration
// are required.
type Options struct {
	// URL is the https URL every request GETs.
	URL string
	// Workers is how many requests are under way at once: each worker
	// sends its next request when its previous one ended.
	Workers int
	// Requests is how many requests each worker sends; the run ends when
	// all are done. Zero: Duration decides.
	Requests int
	// Duration ends the run this long after it started (after Warmup):
	// requests still under way then are abandoned and not counted.
	Duration time.Duration
	// Warmup runs the load this long before the measured part, on the
	// same connections, and forgets it: handshakes and the server's
	// first allocations stay out of the numbers.
	Warmup time.Duration
	// NewConn opens a new connection for every request and closes it
	// afterwards, to measure connections per second.
	NewConn bool
	// Resume keeps the session tickets and address validation tokens the
	// server gives (a tls.ClientSessionCache and a quic.TokenStore shared
	// by every connection, unless TLS and QUIC bring their own), so that
	// each new connection resumes the last one's session: it sends its
	// request in 0-RTT where the ticket allows it, the server may answer
	// at once beyond its anti-amplification limit, and, with Careful
	// Resume, it returns the path state the server last handed over.
	// Without it every connection makes a full handshake.
	Resume bool
	// Conns is how many connections the workers share when NewConn is
	// false; worker i uses connection i mod Conns. Zero means 1.
	Conns int
	// Timeout bounds one request, from its start to the last byte of
	// its body, connection setup included (default 10 s): a request is
	// cut off between Timeout and 9/8 of it after it started.
	Timeout time.Duration
	// TLS is the client's TLS configuration (ALPN is set to h3); nil
	// verifies the server against the system's roots.
	TLS *tls.Config
	// QUIC configures the client's connections; nil takes the defaults,
	// with the handshake bounded by Timeout.
	QUIC *quic.Config
	// ExpectBody, if not nil, is the exact body every response must
	// carry; otherwise a body is only checked against its
	// Content-Length. A difference counts as a body_mismatch error.
	ExpectBody []byte
	// Progress, if set, is called about every ProgressInterval during
	// the measured part with the counts so far.
	Progress func(Progress)
	// MeasureStart, if set, is called just before the measured part
	// starts (after the warm-up), and MeasureEnd just after it ended, so
	// that a caller can meter the server over exactly that time.
	MeasureStart, MeasureEnd func()
}

// ProgressInterval is how often Options.Progress is called.
const ProgressInterval = 250 * time.Millisecond

// Progress is the state of a run while it goes.
type Progress struct {
	Elapsed  time.Duration
	Requests int64 // finished, with or without error
	Errors   int64
	Bytes    int64
	// Warmup is true while the warm-up runs; the counts are then the
	// warm-up's.
	Warmup bool
}

const defaultTimeout = 10 * time.Second

// MaxWorkers bounds Workers: far beyond what a server or this generator
// could use, and still a sane number of goroutines.
const MaxWorkers = 100_000

// check validates the options and returns the parsed URL.
func (o *Options) check() (*url.URL, error) {
	u, err := ParseURL(o.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Workers < 1 || o.Workers > MaxWorkers:
		return nil, fmt.Errorf("load: workers must be from 1 to %d, not %d", MaxWorkers, o.Workers)
	case o.Requests < 0:
		return nil, fmt.Errorf("load: requests per worker must not be negative, not %d", o.Requests)
	case o.Duration < 0 || o.Warmup < 0 || o.Timeout < 0:
		return nil, errors.New("load: durations must not be negative")
	case (o.Requests > 0) == (o.Duration > 0):
		return nil, errors.New("load: give either a number of requests per worker or a duration")
	case o.Conns < 0:
		return nil, fmt.Errorf("load: connections must not be negative, not %d", o.Conns)
	case o.NewConn && o.Conns > 1:
		return nil, errors.New("load: shared connections and a new connection per request exclude each other")
	case o.Conns > o.Workers:
		return nil, fmt.Errorf("load: %d connections for %d workers would leave some unused", o.Conns, o.Workers)
	}
	return u, nil
}

// ParseURL checks that s is an absolute https URL with a host, which is
// all that HTTP/3 can fetch.
func ParseURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("load: no URL")
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("load: %q: HTTP/3 needs an https:// URL", s)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("load: %q has no host", s)
	}
	if u.User != nil {
		return nil, fmt.Errorf("load: %q: credentials in the URL are not supported", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return nil, fmt.Errorf("load: %q: port %q is not from 1 to 65535", s, p)
		}
	}
	return u, nil
}
