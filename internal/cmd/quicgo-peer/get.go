package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// get: one download with quic-go's HTTP/3 client over a fresh connection,
// timed from the start of the connection to the last byte.
func init() {
	register(subcommand{
		name:    "get",
		summary: "download one URL over quic-go's HTTP/3 and print its timings as JSON",
		run:     runGet,
	})
}

const getSynopsis = `get --url URL (--ca FILE [--server-name NAME] | --insecure) [--expect N] [--timeout D] [--resume]

Downloads URL over a fresh HTTP/3 connection (quic-go, default
configuration), discards the body and prints one JSON line to stdout:
status, bytes, and the times from the start of the connection to the end of
the handshake, to the response headers and to the last byte, with the
client's view of the connection (RTT, packets). It fails on a status other
than 200 and, with --expect, on a body of any other length. With --resume,
a first connection downloads URL untimed and keeps the server's session
ticket and address validation token; the download measured is a second
connection that resumes the session and sends its GET in 0-RTT.`

type getOptions struct {
	url        string
	caFile     string
	serverName string
	insecure   bool
	expect     int64
	timeout    time.Duration
	resume     bool
}

func parseGetFlags(args []string, stderr io.Writer) (getOptions, error) {
	o := getOptions{expect: -1}
	fs := newFlagSet("get", getSynopsis, stderr)
	fs.StringVar(&o.url, "url", "", "https URL to download")
	fs.StringVar(&o.caFile, "ca", "", "PEM certificates the server's chain must lead to")
	fs.StringVar(&o.serverName, "server-name", "", "name to verify the server's certificate against (default: the URL's host)")
	fs.BoolVar(&o.insecure, "insecure", false, "do not verify the server's certificate")
	fs.Int64Var(&o.expect, "expect", -1, "fail unless the body is exactly this many bytes (-1: any)")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.BoolVar(&o.resume, "resume", false, "time a second connection that resumes the first one's session with 0-RTT")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	u, err := url.Parse(o.url)
	switch {
	case o.url == "":
		return o, fmt.Errorf("%w: get needs --url", errUsage)
	case err != nil:
		return o, fmt.Errorf("%w: --url: %v", errUsage, err)
	case u.Scheme != "https" || u.Host == "":
		return o, fmt.Errorf("%w: --url %q: want https://HOST:PORT/PATH", errUsage, o.url)
	case o.insecure == (o.caFile != ""):
		return o, fmt.Errorf("%w: get needs exactly one of --ca and --insecure", errUsage)
	case o.insecure && o.serverName != "":
		return o, fmt.Errorf("%w: --server-name is for verification, which --insecure turns off", errUsage)
	case o.timeout <= 0:
		return o, fmt.Errorf("%w: --timeout must be positive", errUsage)
	case o.expect < -1:
		return o, fmt.Errorf("%w: --expect must be a size or -1", errUsage)
	}
	return o, nil
}

// getResult is the JSON line get prints. Times are nanoseconds from the
// moment the client started to open its connection.
type getResult struct {
	Status int   `json:"status"`
	Bytes  int64 `json:"bytes"`
	// ElapsedNs runs to the last byte of the body.
	ElapsedNs int64 `json:"elapsed_ns"`
	// HandshakeNs runs to the completion of the QUIC handshake.
	HandshakeNs int64 `json:"handshake_ns"`
	// FirstByteNs runs to the response headers.
	FirstByteNs int64 `json:"first_byte_ns"`
	// The client's connection statistics at the last byte. The packets
	// lost are the client's own (mostly acknowledgements): the server's
	// losses are on the other side.
	SmoothedRTTNs   int64  `json:"srtt_ns"`
	MinRTTNs        int64  `json:"min_rtt_ns"`
	PacketsReceived uint64 `json:"packets_received"`
	BytesReceived   uint64 `json:"bytes_received"`
	PacketsSent     uint64 `json:"packets_sent"`
	PacketsLost     uint64 `json:"packets_lost"`
	// Resumed and Used0RTT tell how the measured connection started.
	Resumed  bool `json:"resumed"`
	Used0RTT bool `json:"used_0rtt"`
}

func runGet(args []string, stdout, stderr io.Writer) error {
	o, err := parseGetFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), o.timeout, fmt.Errorf("no completion within %v", o.timeout))
	defer cancel()
	res, err := download(ctx, o)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(res)
}

func (o getOptions) tlsConfig() (*tls.Config, error) {
	if o.insecure {
		return &tls.Config{InsecureSkipVerify: true}, nil
	}
	pem, err := os.ReadFile(o.caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca %s: no PEM certificate in it", o.caFile)
	}
	return &tls.Config{RootCAs: pool, ServerName: o.serverName}, nil
}

// dialRecorder dials as http3.Transport does by default (an unconnected
// UDP socket on an ephemeral port, quic.Transport.DialEarly with the
// configuration the Transport hands it) and keeps the connection, so that
// its handshake time and statistics can be read.
type dialRecorder struct {
	mu        sync.Mutex
	conn      *quic.Conn
	tr        *quic.Transport
	handshake chan time.Time // receives when the handshake completes
}

func (d *dialRecorder) dial(ctx context.Context, addr string, tlsCfg *tls.Config, cfg *quic.Config) (*quic.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		// A second connection would time something else than one fresh
		// connection's download.
		return nil, errors.New("the client opened a second connection")
	}
	udpAddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	d.tr = &quic.Transport{Conn: udp}
	conn, err := d.tr.DialEarly(ctx, udpAddr, tlsCfg, cfg)
	if err != nil {
		d.tr.Close()
		return nil, err
	}
	d.conn = conn
	go func() {
		select {
		case <-conn.HandshakeComplete():
			d.handshake <- time.Now()
		case <-conn.Context().Done():
		}
	}()
	return conn, nil
}

func (d *dialRecorder) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		_ = d.conn.CloseWithError(0, "")
	}
	if d.tr != nil {
		_ = d.tr.Close()
	}
}

// download fetches o.url once and measures it.
func download(ctx context.Context, o getOptions) (getResult, error) {
	tlsConf, err := o.tlsConfig()
	if err != nil {
		return getResult{}, err
	}
	method := http.MethodGet
	var qconf *quic.Config
	if o.resume {
		if qconf, err = warmUp(ctx, o, tlsConf); err != nil {
			return getResult{}, err
		}
		method = http3.MethodGet0RTT
	}
	rec := &dialRecorder{handshake: make(chan time.Time, 1)}
	defer rec.close()
	tr := &http3.Transport{TLSClientConfig: tlsConf, QUICConfig: qconf, Dial: rec.dial}
	defer tr.Close()
	req, err := http.NewRequestWithContext(ctx, method, o.url, nil)
	if err != nil {
		return getResult{}, err
	}
	start := time.Now()
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return getResult{}, fmt.Errorf("GET %s: %w", o.url, withCause(ctx, err))
	}
	defer resp.Body.Close()
	firstByte := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return getResult{}, fmt.Errorf("GET %s: server answered %s: %s", o.url, resp.Status, strings.TrimSpace(string(msg)))
	}
	n, err := io.Copy(io.Discard, resp.Body)
	elapsed := time.Since(start)
	if err != nil {
		return getResult{}, fmt.Errorf("GET %s: after %d bytes: %w", o.url, n, withCause(ctx, err))
	}
	if o.expect >= 0 && n != o.expect {
		return getResult{}, fmt.Errorf("GET %s: received %d bytes, want %d", o.url, n, o.expect)
	}
	res := getResult{Status: resp.StatusCode, Bytes: n, ElapsedNs: elapsed.Nanoseconds(), FirstByteNs: firstByte.Nanoseconds()}
	rec.mu.Lock()
	conn := rec.conn
	rec.mu.Unlock()
	if conn == nil {
		return getResult{}, errors.New("the response came without a connection being dialled")
	}
	// The handshake is complete by the time the body has arrived: the
	// server sends HANDSHAKE_DONE with its first 1-RTT packet.
	select {
	case t := <-rec.handshake:
		res.HandshakeNs = t.Sub(start).Nanoseconds()
	case <-ctx.Done():
		return getResult{}, fmt.Errorf("handshake never confirmed: %w", context.Cause(ctx))
	}
	st := conn.ConnectionStats()
	res.SmoothedRTTNs, res.MinRTTNs = st.SmoothedRTT.Nanoseconds(), st.MinRTT.Nanoseconds()
	res.PacketsReceived, res.BytesReceived = st.PacketsReceived, st.BytesReceived
	res.PacketsSent, res.PacketsLost = st.PacketsSent, st.PacketsLost
	cs := conn.ConnectionState()
	res.Resumed, res.Used0RTT = cs.TLS.DidResume, cs.Used0RTT
	return res, nil
}

// warmUp downloads o.url once, untimed, with a session cache in tlsConf
// and a token store, and waits for the server's session ticket. It returns
// the configuration that hands the token to the next connection.
func warmUp(ctx context.Context, o getOptions, tlsConf *tls.Config) (*quic.Config, error) {
	cache := &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), put: make(chan struct{}, 16)}
	tlsConf.ClientSessionCache = cache
	conf := &quic.Config{TokenStore: quic.NewLRUTokenStore(4, 4)}
	tr := &http3.Transport{TLSClientConfig: tlsConf, QUICConfig: conf}
	defer tr.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, o.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return nil, fmt.Errorf("first GET %s: %w", o.url, withCause(ctx, err))
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("first GET %s: %w", o.url, withCause(ctx, err))
	}
	select {
	case <-cache.put:
	case <-time.After(10 * time.Second):
		return nil, errors.New("no session ticket within 10s of the first connection")
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	return conf, nil
}

// withCause adds the reason the context ended to err, when it did.
func withCause(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", err, context.Cause(ctx))
	}
	return err
}
