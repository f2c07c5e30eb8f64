package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// satquic get: download over QUIC with hq-interop (HTTP/0.9), then report
// what the transfer took: time, goodput, handshake, round trips, losses.

func init() {
	register(command{
		name:    "get",
		summary: "download files over QUIC with hq-interop (HTTP/0.9) and report the transfer",
		run:     runGet,
	})
}

const getSynopsis = `get URL [URL...] [-o FILE|DIR] [--insecure | --pin SHA256] [--resume] [--json] [--timeout D] [QUIC flags]

URL is https://HOST[:PORT]/PATH (port 443 by default). Several URLs must
name the same server: they download at once, on one connection, into the
directory -o names. One URL goes to -o FILE, or to stdout without -o (with
--json, the body is then discarded: stdout carries the report). The
summary goes to stderr, with progress while stderr is a terminal.

--resume downloads the first URL on a first connection and the others on
a second one, which resumes the first one's TLS session and sends its
requests in 0-RTT where the server allows it; with one URL, the second
connection fetches it again and discards the copy. The summary says how
the second connection went ("resumed, 0-RTT accepted").`

type getOptions struct {
	out      string
	insecure bool
	pin      string
	jsonOut  bool
	timeout  time.Duration
	resume   bool
	quic     quicOptions
}

// getFile is one download.
type getFile struct {
	URL     string  `json:"url"`
	Output  string  `json:"output,omitempty"`
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`

	path string
}

// getReport is the summary, printed as text or JSON.
type getReport struct {
	Server        string     `json:"server"`
	Files         []*getFile `json:"files"`
	Bytes         int64      `json:"bytes"`
	Seconds       float64    `json:"seconds"`
	GoodputMbps   float64    `json:"goodput_mbps"`
	HandshakeMs   float64    `json:"handshake_ms"`
	SmoothedRTTMs float64    `json:"smoothed_rtt_ms"`
	MinRTTMs      float64    `json:"min_rtt_ms"`
	PacketsSent   uint64     `json:"packets_sent"`
	PacketsRecv   uint64     `json:"packets_received"`
	PacketsLost   uint64     `json:"packets_lost"`
	Retransmitted uint64     `json:"packets_retransmitted"`
	Version       string     `json:"quic_version"`
	CipherSuite   string     `json:"cipher_suite"`
	// Session says whether the TLS session was new or resumed, and what
	// became of 0-RTT.
	Session  string `json:"session"`
	Resumed  bool   `json:"resumed"`
	Used0RTT bool   `json:"used_0rtt"`
	// Resumption is the report of the second connection of --resume.
	Resumption *getReport `json:"resumption,omitempty"`
}

// Sessions as the report names them.
const (
	sessionNew         = "new"
	sessionNotResumed  = "new (the server did not resume the session)"
	sessionResumed     = "resumed"
	session0RTT        = "resumed, 0-RTT accepted"
	session0RTTRefused = "resumed, 0-RTT rejected"
)

func runGet(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return get(ctx, args, stdout, stderr)
}

func get(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o getOptions
	fs := newFlagSet("get", getSynopsis, stderr)
	fs.StringVar(&o.out, "o", "", "output: a file, \"-\" for stdout, or a directory for several URLs")
	fs.BoolVar(&o.insecure, "insecure", false, "do not verify the server's certificate")
	fs.StringVar(&o.pin, "pin", "", "trust exactly the certificate with this SHA-256 (as \"satquic serve\" prints it)")
	fs.BoolVar(&o.jsonOut, "json", false, "print the report as JSON on stdout")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up after this long (0: never)")
	fs.BoolVar(&o.resume, "resume", false, "fetch the URLs after the first on a second connection that resumes the session, with 0-RTT")
	o.quic.register(fs)
	urls, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	server, files, err := parseGetURLs(urls)
	if err != nil {
		return err
	}
	tlsConf, err := o.tlsConfig(server)
	if err != nil {
		return err
	}
	sinks, err := o.openOutputs(files, stdout)
	if err != nil {
		return err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	conf := o.quic.config()
	// Tokens from NEW_TOKEN frames spare the second connection of
	// --resume a Retry.
	conf.TokenStore = quic.NewTokenCache(4)
	var rep *getReport
	if o.resume {
		rep, err = downloadResumed(ctx, server, files, sinks, tlsConf, conf, stderr)
	} else {
		rep, err = download(ctx, server, files, sinks, tlsConf, conf, false, stderr)
	}
	if rep == nil && err != nil && !o.insecure && o.pin == "" && strings.Contains(err.Error(), "certificate") {
		err = fmt.Errorf("%w (for a self-signed server, pass its SHA-256 with --pin)", err)
	}
	if cerr := closeOutputs(files, sinks, err != nil); err == nil {
		err = cerr
	}
	if rep != nil {
		if o.jsonOut {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if jerr := enc.Encode(rep); err == nil {
				err = jerr
			}
		} else {
			printGetReport(stderr, rep)
		}
	}
	return err
}

// parseInterspersed parses flags placed before, between or after the
// positional arguments, which it returns; errors follow parseFlags.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlagsAllowArgs(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseFlagsAllowArgs is parseFlags without the rule against positional
// arguments.
func parseFlagsAllowArgs(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		usage()
		return err
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	return nil
}

// parseGetURLs checks the URLs and returns their common server.
func parseGetURLs(urls []string) (string, []*getFile, error) {
	if len(urls) == 0 {
		return "", nil, fmt.Errorf("%w: no URL", errUsage)
	}
	var server string
	files := make([]*getFile, 0, len(urls))
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			return "", nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		if u.Scheme != "https" || u.Host == "" {
			return "", nil, fmt.Errorf("%w: %q is not https://HOST[:PORT]/PATH", errUsage, raw)
		}
		port := u.Port()
		if port == "" {
			port = "443"
		}
		hostport := net.JoinHostPort(u.Hostname(), port)
		if server != "" && hostport != server {
			return "", nil, fmt.Errorf("%w: the URLs name two servers, %s and %s", errUsage, server, hostport)
		}
		server = hostport
		p := u.EscapedPath()
		if p == "" {
			p = "/"
		}
		if u.RawQuery != "" {
			p += "?" + u.RawQuery
		}
		files = append(files, &getFile{URL: raw, path: p})
	}
	return server, files, nil
}

func (o *getOptions) tlsConfig(server string) (*tls.Config, error) {
	host, _, _ := net.SplitHostPort(server)
	conf := &tls.Config{ServerName: host, NextProtos: []string{hq.ALPN}}
	if o.resume {
		conf.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	}
	switch {
	case o.insecure && o.pin != "":
		return nil, fmt.Errorf("%w: --insecure and --pin exclude each other", errUsage)
	case o.insecure:
		conf.InsecureSkipVerify = true
	case o.pin != "":
		pin, err := hq.ParsePin(o.pin)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		// The pin replaces the chain of trust and the name check.
		conf.InsecureSkipVerify = true
		conf.VerifyPeerCertificate = hq.VerifyPin(pin)
	}
	return conf, nil
}

// sink is where one download goes.
type sink struct {
	w    io.Writer
	buf  *bufio.Writer
	file *os.File
}

// openOutputs creates the outputs before anything is sent, so that a bad
// -o costs no connection.
func (o *getOptions) openOutputs(files []*getFile, stdout io.Writer) ([]sink, error) {
	sinks := make([]sink, len(files))
	if len(files) == 1 {
		switch {
		case o.out == "" && o.jsonOut:
			sinks[0] = sink{w: io.Discard}
			return sinks, nil
		case o.out == "" || o.out == "-":
			sinks[0] = sink{w: stdout}
			return sinks, nil
		}
		if fi, err := os.Stat(o.out); err == nil && fi.IsDir() {
			// One URL into a directory: named as with several.
			return o.createInDir(files)
		}
		f, err := os.Create(o.out)
		if err != nil {
			return nil, fmt.Errorf("%w: -o: %v", errUsage, err)
		}
		files[0].Output = o.out
		b := bufio.NewWriterSize(f, 1<<20)
		sinks[0] = sink{w: b, buf: b, file: f}
		return sinks, nil
	}
	if o.out == "" || o.out == "-" {
		return nil, fmt.Errorf("%w: several URLs need -o DIR", errUsage)
	}
	if fi, err := os.Stat(o.out); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: -o %s is not a directory, and several URLs need one", errUsage, o.out)
	}
	return o.createInDir(files)
}

func (o *getOptions) createInDir(files []*getFile) ([]sink, error) {
	sinks := make([]sink, len(files))
	seen := map[string]bool{}
	for i, f := range files {
		name := path.Base(f.path)
		if name == "/" || name == "." || name == "" {
			name = "index.html"
		}
		if seen[name] {
			closeOutputs(files[:i], sinks[:i], true)
			return nil, fmt.Errorf("%w: two URLs would both write %s", errUsage, name)
		}
		seen[name] = true
		out := filepath.Join(o.out, name)
		fh, err := os.Create(out)
		if err != nil {
			closeOutputs(files[:i], sinks[:i], true)
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		f.Output = out
		b := bufio.NewWriterSize(fh, 1<<20)
		sinks[i] = sink{w: b, buf: b, file: fh}
	}
	return sinks, nil
}

// closeOutputs flushes and closes the output files; after a failure they
// are removed, so that no truncated file looks like a download.
func closeOutputs(files []*getFile, sinks []sink, failed bool) error {
	var errs []error
	for i, s := range sinks {
		if s.file == nil {
			continue
		}
		if s.buf != nil && !failed {
			errs = append(errs, s.buf.Flush())
		}
		errs = append(errs, s.file.Close())
		if failed {
			_ = os.Remove(files[i].Output)
			files[i].Output = ""
		}
	}
	return errors.Join(errs...)
}

// download connects and fetches every file at once; early dials with
// DialAddrEarly, so that a resumed session sends its requests in 0-RTT.
// The report is nil when the connection could not be made.
func download(ctx context.Context, server string, files []*getFile, sinks []sink, tlsConf *tls.Config, conf *quic.Config, early bool, stderr io.Writer) (*getReport, error) {
	start := time.Now()
	dial := quic.DialAddr
	if early {
		dial = quic.DialAddrEarly
	}
	c, err := dial(ctx, server, tlsConf, conf)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", server, err)
	}
	var total atomic.Int64
	stopProgress := startProgress(stderr, &total, start)
	var wg sync.WaitGroup
	errs := make([]error, len(files))
	counts := make([]int64, len(files))
	for i, f := range files {
		wg.Go(func() {
			var last int64
			n, err := hq.Get(ctx, c, f.path, sinks[i].w, func(k int64) {
				total.Add(k - last)
				last = k
			})
			f.Bytes, f.Seconds = n, time.Since(start).Seconds()
			if err != nil {
				f.Error = err.Error()
				errs[i] = fmt.Errorf("%s: %w", f.URL, err)
			}
			counts[i] = n
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	if tlsConf.ClientSessionCache != nil && !hasTicket(ctx, c, tlsConf) {
		fmt.Fprintln(stderr, "no session ticket from the server: the next connection cannot resume")
	}
	st := c.Stats()
	cs := c.ConnectionState()
	_ = c.CloseWithError(0, "")
	rep := &getReport{
		Server:        server,
		Files:         files,
		Seconds:       elapsed.Seconds(),
		HandshakeMs:   ms(st.HandshakeDuration),
		SmoothedRTTMs: ms(st.SmoothedRTT),
		MinRTTMs:      ms(st.MinRTT),
		PacketsSent:   st.PacketsSent,
		PacketsRecv:   st.PacketsReceived,
		PacketsLost:   st.PacketsLost,
		Retransmitted: st.PacketsRetransmitted,
		Version:       cs.Version.String(),
		CipherSuite:   tls.CipherSuiteName(cs.TLS.CipherSuite),
		Session:       sessionNew,
		Resumed:       cs.TLS.DidResume,
		Used0RTT:      cs.Used0RTT,
	}
	if cs.TLS.DidResume {
		rep.Session = sessionResumed
	}
	for _, n := range counts {
		rep.Bytes += n
	}
	if elapsed > 0 {
		rep.GoodputMbps = float64(rep.Bytes) * 8 / elapsed.Seconds() / 1e6
	}
	return rep, errors.Join(errs...)
}

// ticketWait bounds the wait for a session ticket after the downloads: it
// comes with the end of the handshake, long before on any path.
const ticketWait = 2 * time.Second

// hasTicket waits, a little, for the server's session ticket in the
// client's cache.
func hasTicket(ctx context.Context, c *quic.Conn, tlsConf *tls.Config) bool {
	deadline := time.Now().Add(ticketWait)
	for {
		if _, ok := tlsConf.ClientSessionCache.Get(tlsConf.ServerName); ok {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil || c.Context().Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// earlyDataOffered reports whether the client's cached session for the
// server allows 0-RTT.
func earlyDataOffered(tlsConf *tls.Config) bool {
	cs, ok := tlsConf.ClientSessionCache.Get(tlsConf.ServerName)
	if !ok || cs == nil {
		return false
	}
	_, st, err := cs.ResumptionState()
	return err == nil && st != nil && st.EarlyData
}

// downloadResumed fetches the first file on a first connection and the
// others (or the first again, discarded) on a second one that resumes
// the session, with 0-RTT when the ticket allows it.
func downloadResumed(ctx context.Context, server string, files []*getFile, sinks []sink, tlsConf *tls.Config, conf *quic.Config, stderr io.Writer) (*getReport, error) {
	rep, err := download(ctx, server, files[:1], sinks[:1], tlsConf, conf, false, stderr)
	if err != nil {
		return rep, err
	}
	rest, restSinks := files[1:], sinks[1:]
	if len(rest) == 0 {
		again := *files[0]
		again.Output = ""
		rest, restSinks = []*getFile{&again}, []sink{{w: io.Discard}}
	}
	offered := earlyDataOffered(tlsConf)
	second, err := download(ctx, server, rest, restSinks, tlsConf, conf, true, stderr)
	if second != nil {
		switch {
		case !second.Resumed:
			second.Session = sessionNotResumed
		case second.Used0RTT:
			second.Session = session0RTT
		case offered:
			second.Session = session0RTTRefused
		}
		rep.Resumption = second
	}
	return rep, err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// startProgress prints the bytes received and the rate on one line of a
// terminal, every quarter second, until the returned function is called.
func startProgress(w io.Writer, total *atomic.Int64, start time.Time) func() {
	f, ok := w.(*os.File)
	if !ok {
		return func() {}
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(w, "\r\033[K")
				return
			case <-tick.C:
				n := total.Load()
				rate := float64(n) * 8 / time.Since(start).Seconds() / 1e6
				fmt.Fprintf(w, "\r\033[K%s  %.1f Mbit/s", humanBytes(n), rate)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}

func printGetReport(w io.Writer, r *getReport) {
	for _, f := range r.Files {
		status := "ok"
		if f.Error != "" {
			status = f.Error
		}
		dest := f.Output
		if dest == "" {
			dest = "-"
		}
		fmt.Fprintf(w, "%s -> %s: %d bytes (%s)\n", f.URL, dest, f.Bytes, status)
	}
	fmt.Fprintf(w, "%d bytes (%s) in %.3f s: %.1f Mbit/s\n", r.Bytes, humanBytes(r.Bytes), r.Seconds, r.GoodputMbps)
	fmt.Fprintf(w, "handshake %.1f ms, RTT %.1f ms (min %.1f ms), %d packets received, %d sent, %d lost, %d retransmitted (%s, %s)\n",
		r.HandshakeMs, r.SmoothedRTTMs, r.MinRTTMs, r.PacketsRecv, r.PacketsSent, r.PacketsLost, r.Retransmitted, r.Version, r.CipherSuite)
	fmt.Fprintf(w, "session: %s\n", r.Session)
	if r.Resumption != nil {
		fmt.Fprintln(w, "second connection:")
		printGetReport(w, r.Resumption)
	}
}
