package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
)

// bulk-client: quic-go's client of "satquic bench bulk" (bulk.go).
func init() {
	register(subcommand{
		name:    "bulk-client",
		summary: "download over the bulk protocol of satquic bench bulk with quic-go, or hold idle connections",
		run: func(args []string, stdout, stderr io.Writer) error {
			return runBulkClient(args, os.Stdin, stdout, stderr)
		},
	})
}

const bulkClientSynopsis = `bulk-client --addr HOST:PORT --ca FILE --server-name NAME (--size N | --conns N) [--cpuprofile FILE]

Downloads --size bytes over one connection and prints
{"bytes":N,"elapsed_ns":T,"handshake_ns":H}, the time running from the
request to the last byte; or opens --conns idle connections, prints
{"open":N,"open_ns":T} and holds them until its standard input ends.`

type bulkClientOptions struct {
	addr, caFile, serverName, profile string
	size                              int64
	conns                             int
}

// bulkReport is the client's one line, as satquic's bench.BulkClientReport.
type bulkReport struct {
	Bytes       int64 `json:"bytes,omitempty"`
	ElapsedNs   int64 `json:"elapsed_ns,omitempty"`
	HandshakeNs int64 `json:"handshake_ns,omitempty"`
	Open        int   `json:"open,omitempty"`
	OpenNs      int64 `json:"open_ns,omitempty"`
}

// idleDialers bounds the handshakes under way at once, as on satquic's side.
const idleDialers = 32

func runBulkClient(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var o bulkClientOptions
	var size string
	fs := newFlagSet("bulk-client", bulkClientSynopsis, stderr)
	fs.StringVar(&o.addr, "addr", "", "the server's UDP address (HOST:PORT)")
	fs.StringVar(&o.caFile, "ca", "", "PEM certificate that signs the server's")
	fs.StringVar(&o.serverName, "server-name", "", "the name the server's certificate must carry")
	fs.StringVar(&size, "size", "", "bytes to download")
	fs.IntVar(&o.conns, "conns", 0, "idle connections to open and hold instead of downloading")
	fs.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile to FILE")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (size == "") == (o.conns == 0) {
		return fmt.Errorf("%w: give one of --size and --conns", errUsage)
	}
	if size != "" {
		n, err := strconv.ParseInt(size, 10, 64)
		if err != nil || n < 0 || n > maxBulkSize {
			return fmt.Errorf("%w: --size %q: want bytes from 0 to %d", errUsage, size, int64(maxBulkSize))
		}
		o.size = n
	}
	pem, err := os.ReadFile(o.caFile)
	if err != nil {
		return fmt.Errorf("%w: --ca: %v", errUsage, err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return fmt.Errorf("%w: --ca %s holds no PEM certificate", errUsage, o.caFile)
	}
	raddr, err := resolveBulkAddr(o.addr)
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	stopProfile, err := startProfile(o.profile)
	if err != nil {
		return err
	}
	defer stopProfile()
	tlsConf := &tls.Config{RootCAs: roots, ServerName: o.serverName, NextProtos: []string{bulkALPN}}
	out := &jsonLines{W: stdout}
	if o.conns > 0 {
		// Idle connections are held until standard input ends.
		ctx, stop := untilStdinEnds(stdin)
		defer stop()
		return holdIdle(ctx, o.conns, raddr, tlsConf, out)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return getBulk(ctx, o.size, raddr, tlsConf, out)
}

func bulkClientConfig() *quic.Config { return &quic.Config{MaxIdleTimeout: bulkIdleTimeout} }

func getBulk(ctx context.Context, size int64, raddr *net.UDPAddr, tlsConf *tls.Config, out *jsonLines) error {
	start := time.Now()
	c, err := quic.DialAddr(ctx, raddr.String(), tlsConf, bulkClientConfig())
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	defer c.CloseWithError(0, "")
	handshake := time.Since(start)
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	start = time.Now()
	if err := writeBulkRequest(st, size); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if err := st.Close(); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	n, err := readBulk(st)
	elapsed := time.Since(start)
	if err == nil && n != size {
		err = fmt.Errorf("received %d bytes, want %d", n, size)
	}
	if err != nil {
		return fmt.Errorf("after %d bytes: %w", n, err)
	}
	out.Write(bulkReport{Bytes: n, ElapsedNs: int64(elapsed), HandshakeNs: int64(handshake)})
	return nil
}

// holdIdle opens n connections over one socket, idleDialers at a time,
// reports, and holds them until ctx ends.
func holdIdle(ctx context.Context, n int, raddr *net.UDPAddr, tlsConf *tls.Config, out *jsonLines) error {
	udp, err := net.ListenUDP("udp", nil)
	if err != nil {
		return err
	}
	tr := &quic.Transport{Conn: udp}
	defer udp.Close()
	defer tr.Close()
	start := time.Now()
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		conns []*quic.Conn
		first error
		wg    sync.WaitGroup
	)
	next := make(chan struct{})
	for range min(n, idleDialers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				c, err := tr.Dial(dctx, raddr, tlsConf, bulkClientConfig())
				mu.Lock()
				if err != nil && first == nil {
					first = err
					cancel()
				} else if err == nil {
					conns = append(conns, c)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for range n {
		select {
		case next <- struct{}{}:
		case <-dctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil && len(conns) < n {
		first = context.Cause(dctx)
	}
	if first != nil {
		return fmt.Errorf("after %d connections: %w", len(conns), first)
	}
	out.Write(bulkReport{Open: len(conns), OpenNs: int64(time.Since(start))})
	<-ctx.Done()
	for _, c := range conns {
		_ = c.CloseWithError(0, "")
	}
	return nil
}

// resolveBulkAddr resolves the server's address.
func resolveBulkAddr(addr string) (*net.UDPAddr, error) {
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, fmt.Errorf("--addr: %w", err)
	}
	return a, nil
}
