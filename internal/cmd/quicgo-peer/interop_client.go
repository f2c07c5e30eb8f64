package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// interop-client: quic-go as the client of a QUIC interop runner test:
// it fetches the URLs into a directory as the test asks (one connection,
// one per file, or a second connection resuming the first, with 0-RTT).
func init() {
	register(subcommand{
		name:    "interop-client",
		summary: "fetch files over hq-interop or HTTP/3 as an interop runner test's client",
		run:     runInteropClient,
	})
}

const interopClientSynopsis = `interop-client --urls FILE --download DIR [--alpn hq-interop|h3] [--test NAME] [--keylog FILE] [--timeout D]

Fetches the URLs listed in FILE (one per line, all of one server) into
DIR, without verifying the server's certificate. --test is the interop
runner's test: multiconnect opens a connection per file; resumption
fetches the first file, waits for a session ticket and fetches the others
on a second connection that resumes the session; zerortt does the same
with the second connection's requests in 0-RTT; migrate (hq-interop) moves the
connection to a new socket half a second in; the others fetch every file
at once on one connection.`

type interopClientOptions struct {
	urls, download, alpn, test, keyLog string
	timeout                            time.Duration
}

func runInteropClient(args []string, _, stderr io.Writer) error {
	var o interopClientOptions
	fs := newFlagSet("interop-client", interopClientSynopsis, stderr)
	fs.StringVar(&o.urls, "urls", "", "file listing the URLs, one per line")
	fs.StringVar(&o.download, "download", "", "directory to save the files to")
	fs.StringVar(&o.alpn, "alpn", alpnHQ, "application protocol: hq-interop or h3")
	fs.StringVar(&o.test, "test", "transfer", "the interop runner's test")
	fs.StringVar(&o.keyLog, "keylog", "", "append TLS secrets to this file")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.urls == "" || o.download == "" {
		return fmt.Errorf("%w: interop-client needs --urls and --download", errUsage)
	}
	list, err := os.ReadFile(o.urls)
	if err != nil {
		return err
	}
	urls := strings.Fields(string(list))
	if len(urls) == 0 {
		return fmt.Errorf("%w: --urls %s lists no URL", errUsage, o.urls)
	}
	if (o.test == "resumption" || o.test == "zerortt") && len(urls) < 2 {
		return fmt.Errorf("%w: %s needs two URLs or more", errUsage, o.test)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), o.timeout, fmt.Errorf("not done within %v", o.timeout))
	defer cancel()
	c := &interopClient{o: o, tls: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{o.alpn}}}
	if o.keyLog != "" {
		f, err := os.OpenFile(o.keyLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		c.tls.KeyLogWriter = f
	}
	return c.run(ctx, urls)
}

type interopClient struct {
	o   interopClientOptions
	tls *tls.Config
}

func (c *interopClient) run(ctx context.Context, urls []string) error {
	switch c.o.test {
	case "multiconnect":
		for _, u := range urls {
			if err := c.connection(ctx, []string{u}, false, nil); err != nil {
				return err
			}
		}
		return nil
	case "resumption", "zerortt":
		cache := &ticketCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), put: make(chan struct{}, 16)}
		c.tls.ClientSessionCache = cache
		wait := func() error {
			select {
			case <-cache.put:
				return nil
			case <-time.After(10 * time.Second):
				return errors.New("no session ticket within 10s of the first connection")
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if err := c.connection(ctx, urls[:1], false, wait); err != nil {
			return err
		}
		return c.connection(ctx, urls[1:], c.o.test == "zerortt", nil)
	}
	return c.connection(ctx, urls, false, nil)
}

// connection fetches urls at once over a new connection; early sends the
// requests in 0-RTT; before, if set, runs before the connection closes.
func (c *interopClient) connection(ctx context.Context, urls []string, early bool, before func() error) (err error) {
	u0, err := url.Parse(urls[0])
	if err != nil {
		return err
	}
	if c.o.test == "migrate" && c.o.alpn == http3.NextProtoH3 {
		return fmt.Errorf("%w: migrate runs over hq-interop only", errUsage)
	}
	var get func(ctx context.Context, u string, w io.Writer) error
	var closeConn func()
	if c.o.alpn == http3.NextProtoH3 {
		tr := &http3.Transport{TLSClientConfig: c.tls, DisableCompression: true}
		closeConn = func() { tr.Close() }
		method := http.MethodGet
		if early {
			method = http3.MethodGet0RTT
		}
		get = func(ctx context.Context, u string, w io.Writer) error {
			req, err := http.NewRequestWithContext(ctx, method, u, nil)
			if err != nil {
				return err
			}
			resp, err := tr.RoundTrip(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("status %s", resp.Status)
			}
			_, err = io.Copy(w, resp.Body)
			return err
		}
	} else {
		dial := quic.DialAddr
		if early {
			dial = quic.DialAddrEarly
		}
		if c.o.test == "migrate" {
			dial = dialForMigration
		}
		conn, derr := dial(ctx, u0.Host, c.tls, nil)
		if derr != nil {
			return fmt.Errorf("connecting to %s: %w", u0.Host, derr)
		}
		closeConn = func() { _ = conn.CloseWithError(0, "") }
		get = func(ctx context.Context, u string, w io.Writer) error { return hqGet(ctx, conn, u, w) }
		if c.o.test == "migrate" {
			done := make(chan struct{})
			migrated := make(chan error, 1)
			go func() { migrated <- migrate(ctx, conn, done) }()
			defer func() {
				_ = conn.CloseWithError(0, "")
				close(done)
				if merr := <-migrated; merr != nil && err == nil {
					err = merr
				}
			}()
		}
	}
	defer closeConn()
	var wg sync.WaitGroup
	errs := make([]error, len(urls))
	for i, u := range urls {
		wg.Go(func() { errs[i] = c.save(ctx, u, get) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil || before == nil {
		return err
	}
	return before()
}

func (c *interopClient) save(ctx context.Context, u string, get func(context.Context, string, io.Writer) error) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(c.o.download, path.Base(p.Path)))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = get(ctx, u, w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", truncate(u), err)
	}
	return nil
}

// migrationCIDLen is the length of the connection IDs a migrating client
// uses. quic-go's DialAddr gives its client zero-length ones, and a
// packet to a new socket is then routed by nothing: a client that moves
// needs connection IDs (RFC 9000 section 9.5).
const migrationCIDLen = 8

// dialForMigration dials as quic.DialAddr does, from a Transport whose
// connection IDs let its connection move to another.
func dialForMigration(ctx context.Context, addr string, tlsConf *tls.Config, conf *quic.Config) (*quic.Conn, error) {
	raddr, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	pc, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	tr := &quic.Transport{Conn: pc, ConnectionIDLength: migrationCIDLen}
	conn, err := tr.Dial(ctx, raddr, tlsConf, conf)
	if err != nil {
		_ = tr.Close()
		return nil, err
	}
	// The Transport, and the socket, go with the connection.
	context.AfterFunc(conn.Context(), func() { _ = tr.Close() })
	return conn, nil
}

// migrateAfter is when the migrate test moves the connection, from its
// start: into a transfer of a few seconds.
const migrateAfter = 500 * time.Millisecond

// migrate moves conn to a new socket on the same local address
// migrateAfter into the connection, with quic-go's path API: probe the
// new path, then switch to it (RFC 9000 section 9.2). The socket closes
// once done does.
func migrate(ctx context.Context, conn *quic.Conn, done <-chan struct{}) error {
	select {
	case <-time.After(migrateAfter):
	case <-done:
		return errors.New("migrate: the transfer ended before the client moved")
	}
	local, ok := conn.LocalAddr().(*net.UDPAddr)
	if !ok {
		return fmt.Errorf("migrate: local address %v is not UDP", conn.LocalAddr())
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: local.IP})
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	tr := &quic.Transport{Conn: pc, ConnectionIDLength: migrationCIDLen}
	defer func() { <-done; _ = tr.Close() }()
	path, err := conn.AddPath(tr)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := path.Probe(pctx); err != nil {
		return fmt.Errorf("migrate: probing the new path: %w", err)
	}
	if err := path.Switch(); err != nil {
		return fmt.Errorf("migrate: switching to the new path: %w", err)
	}
	return nil
}

// hqGet sends "GET /path" on a new stream, closes its side, and copies the
// answer up to the server's FIN.
func hqGet(ctx context.Context, conn *quic.Conn, u string, w io.Writer) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { st.CancelRead(0); st.CancelWrite(0) })
	defer stop()
	if _, err := io.WriteString(st, "GET "+p.Path+"\r\n"); err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	_, err = io.Copy(w, st)
	return err
}

// ticketCache is a session cache that says when a ticket arrives.
type ticketCache struct {
	tls.ClientSessionCache
	put chan struct{}
}

func (t *ticketCache) Put(key string, cs *tls.ClientSessionState) {
	t.ClientSessionCache.Put(key, cs)
	select {
	case t.put <- struct{}{}:
	default:
	}
}
