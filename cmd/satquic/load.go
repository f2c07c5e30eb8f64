package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/satquic/satquic/bench/load"
	"github.com/satquic/satquic/bench/load/payload"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/internal/report"
)

// satquic load: an HTTP/3 load generator, for satquic's server and any
// other. The engine is package bench/load; this file is its command line.

func init() {
	register(command{
		name:    "load",
		summary: "load an HTTP/3 server: requests/s, connections/s, latency percentiles, errors by kind",
		run:     runLoad,
	})
}

const loadSynopsis = `load -u URL [-c WORKERS] [-n REQUESTS | -d DURATION] [--new-conn | --conns K]
       [--no-resume] [--insecure | --pin SHA256] [--json] [--cpuprofile FILE]
       [--memprofile FILE] [QUIC flags]

Sends GET URL from WORKERS workers at once, each sending its next request
when its last one ended, N requests each (-n) or for a duration (-d, the
default being 10s): requests still under way at the end of -d are not
counted. The workers share one connection (or --conns K), or each request
opens a connection of its own and closes it (--new-conn), which measures
new connections per second. The connections keep the session tickets and
address validation tokens the server gives, so that each new connection
resumes the session of the last: its requests go in 0-RTT where the ticket
allows it (counted as connections in 0-RTT), the server may answer at
once, and the Careful Resume path state the server handed over goes back
to it; --no-resume makes every connection a full handshake, as another
client would. Prints requests/s (successful requests only),
connections/s, the transfer rate of response bodies, latency percentiles
(HdrHistogram; to the last byte of the body, connection setup included with
--new-conn) and failures by kind: connect, timeout, status_NNN,
stream_reset, connection_closed, body_mismatch, other. --json prints one
object with requests_per_second, connections_per_second, errors (a count),
errors_by_kind and latency_ms (p50, p90, p99, p999, in milliseconds).
Exit status 1 when no request succeeded: every one failed, or none was
made. Responses larger than -d allows are no failure: the transfer rate
counts the bytes of the requests cut off at the end, and a note says so.`

type loadOptions struct {
	url          string
	workers      int
	requests     int
	duration     time.Duration
	warmup       time.Duration
	newConn      bool
	noResume     bool
	conns        int
	timeout      time.Duration
	insecure     bool
	pin          string
	checkPayload bool
	jsonOut      bool
	cpuProfile   string
	memProfile   string
	quic         quicOptions
}

// loadDefaultDuration applies when neither -n nor -d is given.
const loadDefaultDuration = 10 * time.Second

func parseLoadFlags(args []string, stderr io.Writer) (*loadOptions, error) {
	o := &loadOptions{}
	fs := newFlagSet("load", loadSynopsis, stderr)
	fs.StringVar(&o.url, "u", "", "URL to GET, https://HOST[:PORT]/PATH (required)")
	fs.IntVar(&o.workers, "c", 50, "concurrent workers: requests under way at once")
	fs.IntVar(&o.requests, "n", 0, "requests per worker (instead of -d)")
	fs.DurationVar(&o.duration, "d", 0, "run for this long (default 10s unless -n is given)")
	fs.DurationVar(&o.warmup, "warmup", 0, "load the server this long first, uncounted, on the same connections")
	fs.BoolVar(&o.newConn, "new-conn", false, "open a new connection for every request, to measure connections/s")
	fs.IntVar(&o.conns, "conns", 1, "connections the workers share (without --new-conn)")
	fs.BoolVar(&o.noResume, "no-resume", false, "keep no session ticket or token: every connection makes a full handshake")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "give up a request after this long, connection setup included")
	fs.BoolVar(&o.insecure, "insecure", false, "do not verify the server's certificate")
	fs.StringVar(&o.pin, "pin", "", "trust exactly the certificate with this SHA-256 (as \"satquic serve\" prints it)")
	fs.BoolVar(&o.checkPayload, "check-payload", false, "the URL is "+payload.Prefix+"N of a satquic load server: check every body byte for byte")
	fs.BoolVar(&o.jsonOut, "json", false, "print the result as one JSON object on stdout")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write the load generator's CPU profile to FILE, for \"go tool pprof\"")
	fs.StringVar(&o.memProfile, "memprofile", "", "write the load generator's allocation profile to FILE at the end, for \"go tool pprof -sample_index=alloc_space\"")
	o.quic.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	usage := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errUsage}, a...)...)
	}
	if o.url == "" {
		return nil, usage("-u URL is required")
	}
	if _, err := load.ParseURL(o.url); err != nil {
		return nil, usage("-u: %v", strings.TrimPrefix(err.Error(), "load: "))
	}
	switch {
	case o.workers < 1 || o.workers > load.MaxWorkers:
		return nil, usage("-c must be from 1 to %d, not %d", load.MaxWorkers, o.workers)
	case o.requests < 0:
		return nil, usage("-n must not be negative, not %d", o.requests)
	case o.requests > 0 && flagWasSet(fs, "d"):
		return nil, usage("-n and -d exclude each other")
	case o.duration < 0 || (flagWasSet(fs, "d") && o.duration == 0):
		return nil, usage("-d must be positive, not %v", o.duration)
	case o.warmup < 0:
		return nil, usage("--warmup must not be negative")
	case o.timeout <= 0:
		return nil, usage("--timeout must be positive, not %v", o.timeout)
	case o.newConn && flagWasSet(fs, "conns"):
		return nil, usage("--new-conn and --conns exclude each other")
	case o.conns < 1 || o.conns > o.workers:
		return nil, usage("--conns must be from 1 to -c (%d), not %d", o.workers, o.conns)
	case o.insecure && o.pin != "":
		return nil, usage("--insecure and --pin exclude each other")
	case o.quic.maxDatagram < 1200 || o.quic.maxDatagram > 9000:
		return nil, usage("--max-datagram-size must be from 1200 to 9000, not %d", o.quic.maxDatagram)
	}
	if o.requests == 0 && o.duration == 0 {
		o.duration = loadDefaultDuration
	}
	return o, nil
}

// loadTLSConfig is the client's TLS configuration, with --insecure and
// --pin as "satquic get" has them.
func loadTLSConfig(insecure bool, pin string) (*tls.Config, error) {
	conf := &tls.Config{}
	switch {
	case insecure:
		conf.InsecureSkipVerify = true
	case pin != "":
		p, err := hq.ParsePin(pin)
		if err != nil {
			return nil, fmt.Errorf("%w: --pin: %v", errUsage, err)
		}
		// The pin replaces the chain of trust and the name check.
		conf.InsecureSkipVerify = true
		conf.VerifyPeerCertificate = hq.VerifyPin(p)
	}
	return conf, nil
}

// loadExpectedBody is the body --check-payload expects from the URL.
func loadExpectedBody(rawURL string) ([]byte, error) {
	u, err := load.ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	n, err := payload.ParsePath(u.Path, u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("%w: --check-payload needs a URL of the form https://HOST:PORT%sN", errUsage, payload.Prefix)
	}
	const limit = 256 << 20
	if n > limit {
		return nil, fmt.Errorf("%w: --check-payload keeps the expected body in memory: at most %d bytes, not %d", errUsage, limit, n)
	}
	return payload.Body(int(n)), nil
}

func runLoad(args []string, stdout, stderr io.Writer) error {
	o, err := parseLoadFlags(args, stderr)
	if err != nil {
		return err
	}
	tlsConf, err := loadTLSConfig(o.insecure, o.pin)
	if err != nil {
		return err
	}
	var expect []byte
	if o.checkPayload {
		if expect, err = loadExpectedBody(o.url); err != nil {
			return err
		}
	}
	stopProfile, err := startCPUProfile(o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopMemProfile, err := startMemProfile(o.memProfile)
	if err != nil {
		return err
	}
	defer stopMemProfile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := load.Options{
		URL: o.url, Workers: o.workers, Requests: o.requests, Duration: o.duration, Warmup: o.warmup,
		NewConn: o.newConn, Resume: !o.noResume, Timeout: o.timeout, TLS: tlsConf, QUIC: o.quic.config(), ExpectBody: expect,
	}
	if !o.newConn {
		opts.Conns = o.conns
	}
	progress := newLoadProgress(stderr, o)
	opts.Progress = progress.show
	res, err := load.Run(ctx, opts)
	progress.clear()
	if res == nil {
		return err
	}
	interrupted := err != nil
	if o.jsonOut {
		if jerr := report.WriteJSON(stdout, res); jerr != nil {
			return jerr
		}
	} else if werr := res.WriteText(stdout); werr != nil {
		return werr
	}
	switch {
	case interrupted:
		return fmt.Errorf("interrupted after %.1f s: the numbers cover what was done", res.Seconds)
	case res.Succeeded == 0 && res.Errors == 0 && res.Bytes > 0:
		// Responses larger than the run: the transfer rate holds, the
		// request counts do not.
		fmt.Fprintf(stderr, "satquic load: no request completed within the %.1f s measured (%d cut off at the end, %s of bodies received): "+
			"the responses take longer than -d; the transfer rate counts their bytes, and -n or a longer -d counts whole requests\n",
			res.Seconds, res.Unfinished, loadBytes(res.Bytes))
	case res.Succeeded == 0:
		return fmt.Errorf("no request succeeded (%d failed, %d cut off at the end)%s", res.Errors, res.Unfinished, loadFirstError(res))
	}
	return nil
}

// loadBytes writes a byte count for people.
func loadBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// loadFirstError names the most frequent failure, for the exit message.
func loadFirstError(res *load.Result) string {
	kinds := res.Kinds()
	if len(kinds) == 0 {
		return ""
	}
	msg := fmt.Sprintf(": %s: %s", kinds[0], res.ErrorExamples[kinds[0]])
	if kinds[0] == load.KindConnect && strings.Contains(msg, "certificate") {
		msg += " (for a self-signed server, pass its SHA-256 with --pin, or --insecure)"
	}
	return msg
}

// loadProgress shows the counts on one line of a terminal while the load
// runs; elsewhere it stays silent.
type loadProgress struct {
	w     io.Writer
	total time.Duration // the run's duration, or 0 with -n
	on    bool
	shown bool
}

func newLoadProgress(w io.Writer, o *loadOptions) *loadProgress {
	p := &loadProgress{w: w, total: o.duration}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	return p
}

// show is called from one goroutine at a time (load.Options.Progress).
func (p *loadProgress) show(s load.Progress) {
	if !p.on {
		return
	}
	secs := s.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(s.Requests-s.Errors) / secs
	}
	phase := ""
	if s.Warmup {
		phase = "warm-up "
	}
	of := ""
	if p.total > 0 && !s.Warmup {
		of = fmt.Sprintf("/%.0fs", p.total.Seconds())
	}
	fmt.Fprintf(p.w, "\r\033[K%s%.1fs%s  %d requests  %.0f req/s  %d errors", phase, secs, of, s.Requests, rate, s.Errors)
	p.shown = true
}

func (p *loadProgress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
