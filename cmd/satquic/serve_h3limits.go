package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/satquic/satquic/http3"
)

// limitOptions are serve's bounds on what HTTP/3 clients can make the
// server hold (http3.Server's fields of the same names). Each flag's 0
// means no limit, except --max-conn-header-bytes, whose 0 is the
// default.
type limitOptions struct {
	headerTimeout   time.Duration
	idleTimeout     time.Duration
	stallTimeout    time.Duration
	maxHeaderBytes  byteSize
	connHeaderBytes byteSize
	requestMemory   byteSize
}

func (o *limitOptions) register(fs *flag.FlagSet) {
	o.maxHeaderBytes = 1 << 20
	o.requestMemory = http3.DefaultMaxRequestMemory
	fs.DurationVar(&o.headerTimeout, "header-timeout", http3.DefaultReadHeaderTimeout,
		"reset a request stream whose header has not arrived whole this long after it opened (slow or silent clients; 0: none)")
	fs.DurationVar(&o.idleTimeout, "idle-stream-timeout", http3.DefaultIdleStreamTimeout,
		"reset a request stream whose client sent nothing for this long while its header or body was awaited (0: none)")
	fs.DurationVar(&o.stallTimeout, "response-stall-timeout", http3.DefaultResponseStallTimeout,
		"reset a response whose client took none of it for this long, freeing its file and buffers (0: none)")
	fs.Var(&o.maxHeaderBytes, "max-header-bytes",
		"largest request header, as RFC 9114 counts it; a larger one gets a 431")
	fs.Var(&o.connHeaderBytes, "max-conn-header-bytes",
		"header data that one connection's incomplete requests may buffer together; streams beyond are refused (0: 4x --max-header-bytes, at least 1MiB)")
	fs.Var(&o.requestMemory, "request-memory",
		"request data the server buffers for all clients; beyond it the oldest incomplete headers are reset and new streams refused (0: no limit)")
}

// apply sets the limits of s.
func (o *limitOptions) apply(s *http3.Server) {
	s.ReadHeaderTimeout = noneIfZero(o.headerTimeout)
	s.IdleStreamTimeout = noneIfZero(o.idleTimeout)
	s.ResponseStallTimeout = noneIfZero(o.stallTimeout)
	s.MaxHeaderBytes = int(o.maxHeaderBytes)
	s.MaxConnHeaderBytes = int(o.connHeaderBytes)
	s.MaxRequestMemory = int64(o.requestMemory)
	if o.requestMemory == 0 {
		s.MaxRequestMemory = -1
	}
}

// noneIfZero maps a flag's 0, no limit, to http3.Server's negative.
func noneIfZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func (o *limitOptions) check() error {
	if o.headerTimeout < 0 || o.idleTimeout < 0 || o.stallTimeout < 0 {
		return fmt.Errorf("%w: --header-timeout, --idle-stream-timeout and --response-stall-timeout must not be negative", errUsage)
	}
	if o.maxHeaderBytes == 0 {
		return fmt.Errorf("%w: --max-header-bytes must be positive", errUsage)
	}
	return nil
}

// byteSize is a flag of a number of bytes, with an optional unit: k, M
// and G (powers of 1000) or KiB, MiB and GiB (powers of 1024).
type byteSize int64

func (b *byteSize) String() string {
	if b == nil {
		return "0"
	}
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if *b != 0 && int64(*b)%u.size == 0 {
			return strconv.FormatInt(int64(*b)/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Set(v string) error {
	n, err := parseByteSize(v)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

// parseByteSize reads "65536", "64KiB", "1M" and the like.
func parseByteSize(v string) (int64, error) {
	units := []struct {
		suffix string
		size   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"B", 1},
	}
	mult := int64(1)
	num := strings.TrimSpace(v)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.size
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("want a number of bytes, such as 65536, 64KiB or 1M")
	}
	return n * mult, nil
}

// limitsLine says what the HTTP/3 server's limits refused or cut off.
func limitsLine(st http3.ServerStats) string {
	return fmt.Sprintf("h3 limits: %d streams refused (%d rejected on arrival, %d headers outgrew the memory, %d evicted), %d header timeouts, %d idle streams, %d stalled responses reset",
		st.Rejected+st.Overflowed+st.Evicted, st.Rejected, st.Overflowed, st.Evicted, st.HeaderTimeouts, st.IdleReads, st.StalledWrites)
}
