package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// IdleResult is the idle measurement of one stack's server.
type IdleResult struct {
	Stack string `json:"stack"`
	// Conns is the number of connections the client opened, Held the
	// number the server held (at least 99% of them), which the growth
	// of its memory is divided by.
	Conns int `json:"conns"`
	Held  int `json:"held"`
	// Before and After are the server's memory without connections and
	// with Conns idle ones.
	Before MemReport `json:"before"`
	After  MemReport `json:"after"`
	// OpenS is how long the client took to open the connections.
	OpenS float64 `json:"open_s"`
	// GoBytesPerConn and RSSBytesPerConn are the growth of the server's
	// Go memory and resident set, divided by Held.
	GoBytesPerConn  float64 `json:"go_bytes_per_conn"`
	RSSBytesPerConn float64 `json:"rss_bytes_per_conn"`
	// GoRatio is GoBytesPerConn over quic-go's, when both were measured.
	GoRatio float64 `json:"go_ratio_to_quic_go,omitempty"`
}

// idleSettle is how long the connections stay idle before the server is
// measured: the handshake's leftovers (keys and state a connection
// discards once its handshake is confirmed, RFC 9001 section 4.9) are
// not what an idle connection holds.
const idleSettle = 3 * time.Second

// idleOpenTime bounds the opening of the idle connections: a generous
// handshake time each, on a busy machine.
func idleOpenTime(n int) time.Duration { return time.Minute + time.Duration(n)*10*time.Millisecond }

func runIdle(ctx context.Context, cfg BulkConfig, certs bulkCerts, out *BulkOutcome) error {
	for _, p := range cfg.Programs {
		if !p.Idle {
			continue
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "idle %-8s opening %d connections...\n", p.Stack, cfg.IdleConns)
		}
		r, err := measureIdle(ctx, cfg, certs, p)
		if err != nil {
			return err
		}
		out.Idle = append(out.Idle, r)
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "idle %-8s %d connections opened in %.1f s: %.0f bytes of Go memory and %.0f bytes of RSS each\n",
				p.Stack, r.Conns, r.OpenS, r.GoBytesPerConn, r.RSSBytesPerConn)
		}
	}
	return nil
}

// measureIdle has p's client open cfg.IdleConns connections to p's server
// and measures the server before and after.
func measureIdle(ctx context.Context, cfg BulkConfig, certs bulkCerts, p BulkProgram) (r IdleResult, err error) {
	r = IdleResult{Stack: p.Stack, Conns: cfg.IdleConns}
	fail := func(err error) error { return fmt.Errorf("bench bulk: idle %s: %w", p.Stack, err) }
	srv, addr, err := startBulkServer(ctx, p, certs, "--idle")
	if err != nil {
		return r, err
	}
	defer func() {
		if serr := srv.stop(); err == nil && serr != nil {
			err = fail(serr)
		}
	}()
	if r.Before, err = askMem(ctx, srv); err != nil {
		return r, fail(err)
	}
	cl, err := startChild(bulkClientArgs(p, certs, addr, "--conns", strconv.Itoa(cfg.IdleConns)))
	if err != nil {
		return r, fail(err)
	}
	var rep BulkClientReport
	if err := cl.readJSON(ctx, idleOpenTime(cfg.IdleConns), &rep); err != nil {
		cl.kill()
		return r, fail(err)
	}
	// The client holds its connections until it is stopped, after the
	// measurement.
	defer func() {
		if cerr := cl.stop(); err == nil && cerr != nil {
			err = fail(cerr)
		}
	}()
	if rep.Open != cfg.IdleConns {
		return r, fail(fmt.Errorf("the client opened %d connections, not %d", rep.Open, cfg.IdleConns))
	}
	r.OpenS = time.Duration(rep.OpenNs).Seconds()
	held, err := waitForConns(ctx, srv, cfg.IdleConns)
	if err != nil {
		return r, fail(err)
	}
	select {
	case <-time.After(idleSettle):
	case <-ctx.Done():
		return r, fail(context.Cause(ctx))
	}
	if r.After, err = askMem(ctx, srv); err != nil {
		return r, fail(err)
	}
	if r.After.Conns != held {
		return r, fail(fmt.Errorf("the server held %d connections after %v idle, not %d", r.After.Conns, idleSettle, held))
	}
	r.Held = held
	n := float64(held)
	r.GoBytesPerConn = (float64(r.After.GoBytes()) - float64(r.Before.GoBytes())) / n
	r.RSSBytesPerConn = (float64(r.After.RSSBytes) - float64(r.Before.RSSBytes)) / n
	return r, nil
}

func askMem(ctx context.Context, srv *child) (MemReport, error) {
	var m MemReport
	if err := srv.ask("mem"); err != nil {
		return m, err
	}
	return m, srv.readJSON(ctx, startupTimeout, &m)
}

// connsWait bounds the wait for the server to hold every connection its
// client has: the last handshakes complete at the server a moment after
// the client. connsSteady is how long a count that stopped growing short
// of them is trusted: a client can count as open a connection whose last
// handshake flight the server never got (a UDP queue overflowing while
// thousands of handshakes run), which then times out at the client only.
const (
	connsWait   = 30 * time.Second
	connsSteady = 5 * time.Second
)

// minHeldShare is the share of the client's connections a server must
// hold for the measurement to stand.
const minHeldShare = 0.99

// waitForConns waits until the server holds n connections, or a steady
// count of at least minHeldShare of them, and returns the count.
func waitForConns(ctx context.Context, srv *child, n int) (int, error) {
	start := time.Now()
	last, since := -1, start
	for {
		m, err := askMem(ctx, srv)
		if err != nil {
			return 0, err
		}
		if m.Conns == n {
			return n, nil
		}
		now := time.Now()
		if m.Conns != last {
			last, since = m.Conns, now
		}
		steady := now.Sub(since) >= connsSteady
		if steady && float64(m.Conns) >= minHeldShare*float64(n) {
			return m.Conns, nil
		}
		if now.Sub(start) > connsWait {
			return 0, fmt.Errorf("the server holds %d connections %v after its client opened %d", m.Conns, connsWait, n)
		}
		select {
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			return 0, errors.New("interrupted")
		}
	}
}
