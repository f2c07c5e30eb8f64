package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// fetcher downloads files over one connection in the application protocol
// its handshake chose. fetch may be called from several goroutines at
// once: the downloads share the connection.
type fetcher interface {
	// fetch downloads one file into w, counting what arrives in p, and
	// returns its length.
	fetch(ctx context.Context, f *getFile, w io.Writer, p *getProgress) (int64, error)
	// close closes the connection.
	close()
}

// newFetcher returns the fetcher of the protocol proto.
func newFetcher(c *quic.Conn, server, proto string) (fetcher, error) {
	switch proto {
	case http3.NextProtoH3:
		return newH3Fetcher(c, server), nil
	case hq.ALPN:
		return hqFetcher{c}, nil
	}
	return nil, fmt.Errorf("the server chose the application protocol %q, which this client did not offer", proto)
}

// hqFetcher downloads with hq-interop (HTTP/0.9): one stream per file.
type hqFetcher struct{ c *quic.Conn }

func (h hqFetcher) fetch(ctx context.Context, f *getFile, w io.Writer, p *getProgress) (int64, error) {
	var last int64
	return hq.Get(ctx, h.c, f.path, w, func(n int64) {
		p.add(n - last)
		last = n
	})
}

func (h hqFetcher) close() { _ = h.c.CloseWithError(0, "") }

// negotiatedProtocol returns the application protocol of c. A connection
// offered a single protocol speaks it, and its requests can leave in
// 0-RTT before the handshake completes; otherwise the handshake must be
// over for the server's choice to be known.
func negotiatedProtocol(ctx context.Context, c *quic.Conn, offered []string) (string, error) {
	if len(offered) == 1 {
		return offered[0], nil
	}
	select {
	case <-c.HandshakeComplete():
	case <-c.Context().Done():
		return "", context.Cause(c.Context())
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return c.ConnectionState().TLS.NegotiatedProtocol, nil
}

// alertNoApplicationProtocol is the TLS alert a server sends when it
// speaks none of the client's application protocols (RFC 7301 section
// 3.2); QUIC carries it as the transport error 0x0100 plus the alert
// (RFC 9001 section 4.8).
const alertNoApplicationProtocol = 0x0100 + 120

// connectError explains a failed connection; a server that speaks none
// of the protocols offered is named as such.
func connectError(server string, offered []string, err error) error {
	var te *quic.TransportError
	if errors.As(err, &te) && te.ErrorCode == alertNoApplicationProtocol {
		return fmt.Errorf("connecting to %s: the server speaks none of the application protocols offered (%s; see --alpn): %w",
			server, strings.Join(offered, ", "), err)
	}
	var ht *quic.HandshakeTimeoutError
	if errors.As(err, &ht) || errors.Is(err, context.DeadlineExceeded) {
		_, port, _ := net.SplitHostPort(server)
		return fmt.Errorf("connecting to %s: no handshake with the server (is a QUIC server listening on UDP port %s? firewalls often drop UDP; --handshake-timeout sets the wait): %w",
			server, port, err)
	}
	return fmt.Errorf("connecting to %s: %w", server, err)
}

// stillConnectingAfter is when a dial that has had no answer says so, so
// that an unreachable server is not met with silence for the whole
// handshake timeout.
const stillConnectingAfter = 3 * time.Second

// noteSlowDial prints one line to w if the dial is still waiting after
// stillConnectingAfter; the returned function, called once the dial ended,
// cancels it.
func noteSlowDial(w io.Writer, server string, timeout time.Duration) (stop func()) {
	if timeout <= 0 {
		timeout = 20 * time.Second
	}
	t := time.AfterFunc(stillConnectingAfter, func() {
		fmt.Fprintf(w, "connecting to %s: no answer yet after %v, waiting up to %v...\n", server, stillConnectingAfter, timeout)
	})
	return func() { t.Stop() }
}
