package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/bench/load"
	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// TestServeSoak runs "satquic serve" for SATQUIC_SOAK (for example 10m)
// under every attack of issue #13 at once, while legitimate clients use
// it, and checks that the server answers every legitimate request, that
// its memory stays flat and that it holds no more goroutines once the
// attacks end than before they began:
//
//   - partial headers: 4 connections x 100 streams, each announcing a
//     2 MiB HEADERS frame and sending all of it but one byte, opened again
//     as the server resets them;
//   - silent streams: 200 connections x 100 streams of one byte each;
//   - silent handshakes: 1,200 sockets spread over 40 source addresses,
//     each sending its first flight (and answering a Retry) and then
//     nothing, started again as the server drops them;
//   - idle connections: 3,000 connections from 6 source addresses that
//     send nothing after their handshake.
//
// The attackers use addresses of 127.0.0.0/8 other than 127.0.0.1, so
// that they are sources of their own, as distinct hosts would be. The
// legitimate clients, from 127.0.0.1, are two "satquic load" processes
// (one connection with 8 workers fetching 1 MB, and a new connection per
// request for a small file) and a hundred "satquic get" downloads of
// 1 MB spread over the run. SATQUIC_SOAK_ARGS
// adds serve flags (for example --retry).
//
//	SATQUIC_SOAK=10m go test ./cmd/satquic -run TestServeSoak -v -timeout 30m
func TestServeSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("SATQUIC_SOAK"))
	if err != nil {
		t.Skip("set SATQUIC_SOAK to a duration (for example 10m) to run")
	}
	dir := t.TempDir()
	big := bytes.Repeat([]byte("satquic "), 1<<17) // 1 MiB
	serveMust(t, os.WriteFile(filepath.Join(dir, "big"), big, 0o644))
	serveMust(t, os.WriteFile(filepath.Join(dir, "small"), []byte("hello\n"), 0o644))
	debug := freeTCPAddr(t)
	pid, addr := startServeProcess(t, dir, append([]string{"--debug-addr", debug}, strings.Fields(os.Getenv("SATQUIC_SOAK_ARGS"))...)...)
	waitDebug(t, debug)
	before := debugVars(t, debug)
	t.Logf("serve pid %d on %s: %s, %d goroutines", pid, addr, procMemory(t, pid), before.Goroutines)

	bin := buildSatquic(t)
	ctx, stopAttacks := context.WithCancel(context.Background())
	var attackers sync.WaitGroup
	var stats attackStats
	attackers.Go(func() { partialHeaders(ctx, addr, &stats) })
	attackers.Go(func() { silentStreams(ctx, addr, &stats) })
	attackers.Go(func() { silentHandshakes(ctx, addr, &stats) })
	attackers.Go(func() { idleConns(ctx, addr, &stats) })

	url := "https://" + addr
	loads := []*exec.Cmd{
		exec.Command(bin, "load", "-u", url+"/big", "-c", "8", "-d", d.String(), "--insecure", "--json"),
		exec.Command(bin, "load", "-u", url+"/small", "--new-conn", "-c", "2", "-d", d.String(), "--insecure", "--json"),
	}
	outs := make([]bytes.Buffer, len(loads))
	errs := make([]bytes.Buffer, len(loads))
	for i, c := range loads {
		c.Stdout, c.Stderr = &outs[i], &errs[i]
		serveMust(t, c.Start())
	}

	// A hundred downloads spread over the run, each starting on time or,
	// when the one before took longer, right after it.
	start := time.Now()
	var gets, getsOK int
	var rss []rssSample
	for ; gets < soakDownloads; gets++ {
		time.Sleep(time.Until(start.Add(d * time.Duration(gets) / soakDownloads)))
		out := filepath.Join(t.TempDir(), "big")
		if stderr, err := runProcess(60*time.Second, bin, "get", url+"/big", "--insecure", "-o", out); err != nil {
			t.Logf("download %d failed: %v: %s", gets+1, err, lastLines(stderr, 2))
		} else if b, _ := os.ReadFile(out); bytes.Equal(b, big) {
			getsOK++
		}
		if gets%10 == 0 {
			m := procMemory(t, pid)
			rss = append(rss, rssSample{time.Since(start), m})
			v := debugVars(t, debug)
			t.Logf("%v: %s, %d goroutines, %d/%d downloads; attacks: %s", time.Since(start).Round(time.Second), m, v.Goroutines, getsOK, gets+1, stats.String())
		}
	}
	for i, c := range loads {
		if err := c.Wait(); err != nil {
			t.Errorf("load %d: %v\n%s", i, err, lastLines(errs[i].String(), 5))
		}
		var r load.Result
		if err := json.Unmarshal(outs[i].Bytes(), &r); err != nil {
			t.Errorf("load %d: %v: %q", i, err, outs[i].String())
			continue
		}
		t.Logf("load %s: %d requests, %d succeeded, %d errors %v, %.0f req/s, p99 %.0f ms", r.URL, r.Requests, r.Succeeded, r.Errors, r.ErrorsByKind, r.RequestsPerSecond, r.LatencyMs.P99)
		if r.Errors != 0 || r.Succeeded == 0 {
			t.Errorf("load %s: %d errors %v (%v) out of %d requests", r.URL, r.Errors, r.ErrorsByKind, r.ErrorExamples, r.Requests)
		}
	}
	t.Logf("%d of %d downloads succeeded", getsOK, gets)
	if getsOK != gets {
		t.Errorf("%d of %d downloads failed", gets-getsOK, gets)
	}
	end := procMemory(t, pid)
	stopAttacks()
	attackers.Wait()
	t.Logf("end: %s; attacks: %s", end, stats.String())
	// Flat memory: the end is no higher than the most the server held
	// between a fifth and half of the run, once the attacks were all under
	// way, by more than a quarter and 32 MB of the garbage collector's
	// slack.
	if ref, ok := peakBetween(rss, d/5, d/2); ok && end.rss > ref+ref/4+32<<20 {
		t.Errorf("resident memory grew from %d MB to %d MB", ref>>20, end.rss>>20)
	}
	// The server forgets the attackers within an idle timeout (30 s).
	var after debugState
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(2 * time.Second) {
		after = debugVars(t, debug)
		if after.Goroutines <= before.Goroutines+10 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("after the attacks: %d goroutines (%d before), %s", after.Goroutines, before.Goroutines, procMemory(t, pid))
	if after.Goroutines > before.Goroutines+10 {
		t.Errorf("the server holds %d goroutines, %d before the attacks:\n%s", after.Goroutines, before.Goroutines, goroutineProfile(debug))
	}
}

// freeTCPAddr returns a loopback TCP address that was free a moment ago.
func freeTCPAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// goroutineProfile returns serve's goroutines grouped by stack.
func goroutineProfile(addr string) string {
	resp, err := http.Get("http://" + addr + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return string(b)
}

// waitDebug waits for serve's debug endpoints, which start a moment
// after the server prints its address.
func waitDebug(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve's debug endpoints: %v", err)
		}
	}
}

// debugVars reads serve's /debug/vars.
func debugVars(t *testing.T, addr string) debugState {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/debug/vars")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st debugState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// runProcess runs bin with args, bounded by limit, and returns its stderr.
// The legitimate clients run as processes of their own, as they would on
// other hosts: in the test's process, the attackers' goroutines would
// starve them of CPU.
func runProcess(limit time.Duration, bin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = &errb
	err := cmd.Run()
	return errb.String(), err
}

// rssSample is the server's memory at a time of the run.
type rssSample struct {
	at time.Duration
	m  memoryUse
}

// peakBetween returns the highest resident memory sampled from lo to hi.
func peakBetween(samples []rssSample, lo, hi time.Duration) (int64, bool) {
	var peak int64
	ok := false
	for _, s := range samples {
		if s.at >= lo && s.at <= hi {
			peak, ok = max(peak, s.m.rss), true
		}
	}
	return peak, ok
}

// soakDownloads is how many downloads the legitimate "get" makes.
const soakDownloads = 100

// attackStats counts what the attackers did.
type attackStats struct {
	headerStreams, silentStreams, handshakes, idleConns, dialFailures atomic.Int64
}

func (s *attackStats) String() string {
	return fmt.Sprintf("%d partial-header streams, %d silent streams, %d silent handshakes, %d idle connections, %d refused dials",
		s.headerStreams.Load(), s.silentStreams.Load(), s.handshakes.Load(), s.idleConns.Load(), s.dialFailures.Load())
}

// attackTLS is the hostile clients' TLS configuration.
var attackTLS = &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}}

// transportFrom returns a quic.Transport on a socket bound to ip.
func transportFrom(ip string) (*quic.Transport, error) {
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(ip)})
	if err != nil {
		return nil, err
	}
	return &quic.Transport{Conn: pc}, nil
}

// streamAttack keeps conns connections from ip, each with streams streams
// that send a HEADERS frame announcing size bytes and send sent of them,
// and opens each connection again once the server reset all its streams.
func streamAttack(ctx context.Context, addr, ip string, conns, streams int, size, sent uint64, count *atomic.Int64, failures *atomic.Int64) {
	tr, err := transportFrom(ip)
	if err != nil {
		failures.Add(1)
		return
	}
	defer tr.Close()
	udpAddr, _ := net.ResolveUDPAddr("udp", addr)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			for ctx.Err() == nil {
				c, err := tr.Dial(ctx, udpAddr, attackTLS, &quic.Config{MaxIdleTimeout: time.Minute})
				if err != nil {
					failures.Add(1)
					sleepCtx(ctx, time.Second)
					continue
				}
				var sts sync.WaitGroup
				for range streams {
					st, err := c.OpenStreamSync(ctx)
					if err != nil {
						break
					}
					count.Add(1)
					sts.Go(func() { hostileStream(st, size, sent) })
				}
				done := make(chan struct{})
				go func() { sts.Wait(); close(done) }()
				select {
				case <-done:
				case <-ctx.Done():
				}
				_ = c.CloseWithError(0, "")
				<-done
			}
		})
	}
	wg.Wait()
}

func partialHeaders(ctx context.Context, addr string, s *attackStats) {
	streamAttack(ctx, addr, "127.0.0.2", 4, 100, 2<<20, 2<<20-1, &s.headerStreams, &s.dialFailures)
}

func silentStreams(ctx context.Context, addr string, s *attackStats) {
	streamAttack(ctx, addr, "127.0.0.3", 200, 100, 100, 0, &s.silentStreams, &s.dialFailures)
}

// silentHandshakes keeps 1,200 handshakes open from 40 addresses: each
// socket sends two datagrams (its Initial, and its answer to a Retry or its
// acknowledgement of the server's first flight) and then falls silent, as
// a client that gives up would, until the dial fails.
func silentHandshakes(ctx context.Context, addr string, s *attackStats) {
	udpAddr, _ := net.ResolveUDPAddr("udp", addr)
	var wg sync.WaitGroup
	for host := 1; host <= 40; host++ {
		for range 30 {
			wg.Go(func() {
				for ctx.Err() == nil {
					pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 1, byte(host))})
					if err != nil {
						s.dialFailures.Add(1)
						sleepCtx(ctx, time.Second)
						continue
					}
					tr := &quic.Transport{Conn: &mutedConn{PacketConn: pc, writes: 2}}
					dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
					s.handshakes.Add(1)
					if c, err := tr.Dial(dctx, udpAddr, attackTLS, &quic.Config{HandshakeTimeout: time.Minute}); err == nil {
						_ = c.CloseWithError(0, "")
					}
					cancel()
					_ = tr.Close()
				}
			})
		}
	}
	wg.Wait()
}

// mutedConn passes the first writes datagrams and silently drops the rest.
type mutedConn struct {
	net.PacketConn
	mu     sync.Mutex
	writes int
}

func (m *mutedConn) WriteTo(p []byte, addr net.Addr) (int, error) {
	m.mu.Lock()
	pass := m.writes > 0
	m.writes--
	m.mu.Unlock()
	if !pass {
		return len(p), nil
	}
	return m.PacketConn.WriteTo(p, addr)
}

// idleConns keeps 3,000 connections from 6 addresses that send nothing
// after their handshake, and opens each again when the server closes it.
func idleConns(ctx context.Context, addr string, s *attackStats) {
	udpAddr, _ := net.ResolveUDPAddr("udp", addr)
	var wg sync.WaitGroup
	for host := 1; host <= 6; host++ {
		tr, err := transportFrom(fmt.Sprintf("127.0.2.%d", host))
		if err != nil {
			s.dialFailures.Add(1)
			continue
		}
		defer tr.Close()
		for range 500 {
			wg.Go(func() {
				for ctx.Err() == nil {
					c, err := tr.Dial(ctx, udpAddr, attackTLS, &quic.Config{MaxIdleTimeout: time.Hour})
					if err != nil {
						s.dialFailures.Add(1)
						sleepCtx(ctx, time.Second)
						continue
					}
					s.idleConns.Add(1)
					select {
					case <-c.Context().Done():
					case <-ctx.Done():
						_ = c.CloseWithError(0, "")
					}
				}
			})
		}
	}
	wg.Wait()
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
