package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/satquic/satquic/quic"
)

// BulkClientOptions configure a bulk client child.
type BulkClientOptions struct {
	// Stack is BulkSatquic or BulkTCPTLS.
	Stack string
	// Addr is the server's address, HOST:PORT.
	Addr string
	// Roots verify the server, under ServerName.
	Roots      *x509.CertPool
	ServerName string
	// Size is the download's size in bytes (Conns 0).
	Size int64
	// Conns, if positive, opens that many idle connections instead of
	// downloading, and holds them until stdin ends.
	Conns int
}

// BulkClientReport is a client child's one line of output.
type BulkClientReport struct {
	// Bytes is what the download received.
	Bytes int64 `json:"bytes,omitempty"`
	// ElapsedNs runs from the request to the last byte.
	ElapsedNs int64 `json:"elapsed_ns,omitempty"`
	// HandshakeNs is the connection's handshake.
	HandshakeNs int64 `json:"handshake_ns,omitempty"`
	// Open is the number of idle connections open, and OpenNs the time
	// it took to open them.
	Open   int   `json:"open,omitempty"`
	OpenNs int64 `json:"open_ns,omitempty"`
}

// idleDialers bounds the handshakes an idle client has under way at once,
// well below a server's default handshake limits.
const idleDialers = 32

// RunBulkClient downloads o.Size bytes, or holds o.Conns idle connections
// until stdin ends, and prints its BulkClientReport.
func RunBulkClient(ctx context.Context, o BulkClientOptions, stdin io.Reader, stdout io.Writer) error {
	tlsConf := &tls.Config{RootCAs: o.Roots, ServerName: o.ServerName, NextProtos: []string{BulkALPN}, MinVersion: tls.VersionTLS13}
	out := &lockedWriter{W: stdout}
	switch {
	case o.Stack == BulkSatquic && o.Conns > 0:
		return holdSatquicIdle(ctx, o, tlsConf, stdin, out)
	case o.Stack == BulkSatquic:
		return getSatquicBulk(ctx, o, tlsConf, out)
	case o.Stack == BulkTCPTLS && o.Conns == 0:
		return getTCPTLSBulk(ctx, o, tlsConf, out)
	case o.Stack == BulkTCPTLS:
		return errors.New("bulk client: tcp-tls has no idle measurement")
	}
	return fmt.Errorf("bulk client: unknown stack %q (%s or %s)", o.Stack, BulkSatquic, BulkTCPTLS)
}

// bulkSatquicClientConfig is satquic's default configuration with the
// experiment's idle timeout.
func bulkSatquicClientConfig() *quic.Config {
	return &quic.Config{MaxIdleTimeout: bulkIdleTimeout}
}

func getSatquicBulk(ctx context.Context, o BulkClientOptions, tlsConf *tls.Config, out *lockedWriter) error {
	start := time.Now()
	c, err := quic.DialAddr(ctx, o.Addr, tlsConf, bulkSatquicClientConfig())
	if err != nil {
		return fmt.Errorf("bulk client: handshake: %w", err)
	}
	defer c.CloseWithError(0, "")
	handshake := time.Since(start)
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		return fmt.Errorf("bulk client: %w", err)
	}
	return timeBulk(o.Size, handshake, st, st.Close, out)
}

func getTCPTLSBulk(ctx context.Context, o BulkClientOptions, tlsConf *tls.Config, out *lockedWriter) error {
	start := time.Now()
	d := tls.Dialer{Config: tlsConf}
	c, err := d.DialContext(ctx, "tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("bulk client: handshake: %w", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	return timeBulk(o.Size, time.Since(start), c, func() error { return nil }, out)
}

// timeBulk asks for size bytes on rw, closes the request with done, reads
// the answer and reports it.
func timeBulk(size int64, handshake time.Duration, rw io.ReadWriter, done func() error, out *lockedWriter) error {
	start := time.Now()
	if err := writeBulkRequest(rw, size); err != nil {
		return fmt.Errorf("bulk client: request: %w", err)
	}
	if err := done(); err != nil {
		return fmt.Errorf("bulk client: request: %w", err)
	}
	n, err := readBulk(rw)
	elapsed := time.Since(start)
	if err == nil && n != size {
		err = fmt.Errorf("received %d bytes, want %d", n, size)
	}
	if err != nil {
		return fmt.Errorf("bulk client: after %d bytes: %w", n, err)
	}
	out.Write(BulkClientReport{Bytes: n, ElapsedNs: int64(elapsed), HandshakeNs: int64(handshake)})
	return nil
}

// holdSatquicIdle opens o.Conns connections over one socket, reports, and
// holds them until stdin ends.
func holdSatquicIdle(ctx context.Context, o BulkClientOptions, tlsConf *tls.Config, stdin io.Reader, out *lockedWriter) error {
	raddr, err := net.ResolveUDPAddr("udp", o.Addr)
	if err != nil {
		return fmt.Errorf("bulk client: %w", err)
	}
	pc, err := net.ListenUDP("udp", nil)
	if err != nil {
		return fmt.Errorf("bulk client: %w", err)
	}
	tr := &quic.Transport{Conn: pc}
	defer pc.Close()
	defer tr.Close()
	start := time.Now()
	conns, err := openIdle(ctx, o.Conns, func(ctx context.Context) (*quic.Conn, error) {
		return tr.Dial(ctx, raddr, tlsConf, bulkSatquicClientConfig())
	})
	if err != nil {
		return fmt.Errorf("bulk client: after %d connections: %w", len(conns), err)
	}
	out.Write(BulkClientReport{Open: len(conns), OpenNs: int64(time.Since(start))})
	_, _ = io.Copy(io.Discard, stdin)
	for _, c := range conns {
		_ = c.CloseWithError(0, "")
	}
	return nil
}

// openIdle opens n connections with dial, idleDialers at a time, and
// stops at the first failure.
func openIdle[C any](ctx context.Context, n int, dial func(context.Context) (C, error)) ([]C, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		conns []C
		first error
		wg    sync.WaitGroup
	)
	next := make(chan struct{})
	for range min(n, idleDialers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				c, err := dial(ctx)
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
	for range n {
		select {
		case next <- struct{}{}:
			continue
		case <-ctx.Done():
		}
		break
	}
	close(next)
	wg.Wait()
	if first == nil && len(conns) < n {
		first = context.Cause(ctx)
	}
	return conns, first
}
