//go:build linux

package interop

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
)

// keyUpdateEvery is how many packets a satquic client sends with one key
// in keyupdate, as quic-go's interop client starts its first update after
// 100 packets: the client of a 3 MB download sends a few hundred.
const keyUpdateEvery = 100

// ticketWait bounds the wait for the server's session ticket between the
// two connections of resumption and zerortt, as the runner's clients do.
const ticketWait = 10 * time.Second

func (*satquicImpl) RunClient(ctx context.Context, j *clientJob) error {
	keyLog, err := openKeyLog(j.keyLog)
	if err != nil {
		return err
	}
	defer keyLog.Close()
	// "server" is the name the runner's clients use; the certificate
	// holds it, and is not verified (the runner's is self-made too).
	c := &satquicClient{job: j, conf: satquicConfig(),
		tls: &tls.Config{InsecureSkipVerify: true, NextProtos: []string{j.proto}, KeyLogWriter: keyLog, ServerName: "server"}}
	switch j.test {
	case testKeyUpdate:
		c.conf.KeyUpdateInterval = keyUpdateEvery
	case testV2:
		// Start with v1 and offer v2, which a server preferring it
		// switches to.
		c.conf.Version, c.conf.Versions = quic.Version1, []quic.Version{quic.Version1, quic.Version2}
	}
	switch j.test {
	case testMulticonnect:
		for _, u := range j.urls {
			if err := c.connection(ctx, []string{u}, false, nil); err != nil {
				return err
			}
		}
		return nil
	case testResumption, testZeroRTT:
		cache := newSignalledCache()
		c.tls.ClientSessionCache = cache
		// The first connection stays open until the ticket came.
		waitTicket := func() error { return cache.wait(ctx, ticketWait) }
		if err := c.connection(ctx, j.urls[:1], false, waitTicket); err != nil {
			return err
		}
		return c.connection(ctx, j.urls[1:], j.test == testZeroRTT, nil)
	}
	return c.connection(ctx, j.urls, false, nil)
}

type satquicClient struct {
	job  *clientJob
	conf *quic.Config
	tls  *tls.Config
}

// connection opens a connection and fetches urls on it at once; early
// sends the requests in 0-RTT. before, if set, runs before the
// connection closes.
func (c *satquicClient) connection(ctx context.Context, urls []string, early bool, before func() error) (err error) {
	pc, err := c.job.host.listenUDP(netip.AddrPortFrom(c.job.host.addr, 0))
	if err != nil {
		return err
	}
	defer pc.Close()
	dial := quic.Dial
	if early {
		dial = quic.DialEarly
	}
	conn, err := dial(ctx, pc, net.UDPAddrFromAddrPort(c.job.server), c.tls, c.conf)
	if err != nil {
		return fmt.Errorf("connecting: %w", err)
	}
	defer conn.CloseWithError(0, "")
	var wg sync.WaitGroup
	errs := make([]error, len(urls))
	if c.job.test == testMigrate {
		stop := make(chan struct{})
		migrated := make(chan error, 1)
		go func() { migrated <- c.migrate(ctx, conn, stop) }()
		defer func() {
			// The new socket closes after the connection's last packet.
			_ = conn.CloseWithError(0, "")
			close(stop)
			if merr := <-migrated; merr != nil && err == nil {
				err = merr
			}
		}()
	}
	if c.job.proto == protoH3 {
		tr := &http3.Transport{
			DisableCompression: true,
			Dial: func(context.Context, string, *tls.Config, *quic.Config) (*quic.Conn, error) {
				return conn, nil
			},
		}
		defer tr.Close()
		for i, u := range urls {
			wg.Go(func() {
				errs[i] = save(c.job.download, u, func(w io.Writer) error { return getH3(ctx, tr, u, w) })
			})
		}
	} else {
		// Every request is written before any answer is read, from
		// this goroutine: written from a goroutine per request, they
		// would leave as the goroutines get to run, which on a busy
		// machine spreads them past the handshake, out of 0-RTT.
		for i, u := range urls {
			st, err := requestHQ(ctx, conn, urlPath(u))
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", short(path.Base(urlPath(u))), err)
				continue
			}
			wg.Go(func() {
				errs[i] = save(c.job.download, u, func(w io.Writer) error { return readHQ(ctx, st, w) })
			})
		}
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil || before == nil {
		return err
	}
	return before()
}

// migrateAfter is when a migrating client moves, from the start of its
// connection: into the transfer of connectionmigration's 2 MB, which
// takes about two seconds over the runner's 10 Mbit/s link.
const migrateAfter = 500 * time.Millisecond

// migrate moves conn to a new socket of the client's host migrateAfter
// into the connection (RFC 9000 section 9.2), unless stop closes first;
// the socket closes once stop does.
func (c *satquicClient) migrate(ctx context.Context, conn *quic.Conn, stop <-chan struct{}) error {
	t := time.NewTimer(migrateAfter)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
		return errors.New("migrate: the transfer ended before the client moved")
	}
	pc, err := c.job.host.listenUDP(netip.AddrPortFrom(c.job.host.addr, 0))
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() { <-stop; _ = pc.Close() }()
	if err := conn.Migrate(ctx, pc); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// requestHQ opens a stream and sends an hq-interop request on it, with
// the end of the client's side.
func requestHQ(ctx context.Context, conn *quic.Conn, p string) (*quic.Stream, error) {
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	if err := hq.WriteRequest(st, p); err != nil {
		st.CancelWrite(hq.CodeBadRequest)
		return nil, err
	}
	// A STOP_SENDING from the server may reset the sending side before
	// the FIN; the answer decides.
	_ = st.Close()
	return st, nil
}

// readHQ reads an hq-interop answer to its end.
func readHQ(ctx context.Context, st *quic.Stream, w io.Writer) error {
	stop := context.AfterFunc(ctx, func() { st.CancelRead(hq.CodeInternal) })
	defer stop()
	if _, err := io.Copy(w, st); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return err
	}
	return nil
}

// save fetches u into dir under the last element of its path.
func save(dir, u string, get func(io.Writer) error) error {
	f, err := os.Create(filepath.Join(dir, path.Base(urlPath(u))))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	err = get(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", short(path.Base(urlPath(u))), err)
	}
	return nil
}

func getH3(ctx context.Context, tr *http3.Transport, u string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
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

func urlPath(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "/"
	}
	return p.Path
}

// signalledCache is a session cache that says when a ticket arrived.
type signalledCache struct {
	tls.ClientSessionCache
	put chan struct{}
}

func newSignalledCache() *signalledCache {
	return &signalledCache{ClientSessionCache: tls.NewLRUClientSessionCache(4), put: make(chan struct{}, 16)}
}

func (s *signalledCache) Put(key string, cs *tls.ClientSessionState) {
	s.ClientSessionCache.Put(key, cs)
	select {
	case s.put <- struct{}{}:
	default:
	}
}

func (s *signalledCache) wait(ctx context.Context, bound time.Duration) error {
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-s.put:
		return nil
	case <-t.C:
		return fmt.Errorf("no session ticket within %v of the first connection", bound)
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
