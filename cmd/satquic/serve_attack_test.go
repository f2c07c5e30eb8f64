package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// TestServeAttackRSS measures what hostile HTTP/3 clients make "satquic
// serve" hold on loopback (issue #13): a serve process is attacked for 10
// s, then its resident memory (VmRSS) and peak (VmHWM) are read from
// /proc. It runs only when SATQUIC_ATTACK names the attack:
//
//   - partial: 4 connections x 100 streams, each sending a HEADERS frame
//     that announces twice the default MaxHeaderBytes (2 MiB) and all of
//     it but one byte;
//   - silent: 200 connections x 100 streams of one byte each.
//
// SATQUIC_ATTACK_BIN runs that satquic binary instead of one built from
// this tree (to measure an older one), SATQUIC_ATTACK_ARGS adds serve
// flags, SATQUIC_ATTACK_CONNS and SATQUIC_ATTACK_STREAMS change the
// numbers of connections and of streams on each, and
// SATQUIC_ATTACK_MAX_MB (default 200) is the peak the test allows.
//
//	SATQUIC_ATTACK=partial go test ./cmd/satquic -run TestServeAttackRSS -v -timeout 5m
func TestServeAttackRSS(t *testing.T) {
	attack := os.Getenv("SATQUIC_ATTACK")
	if attack == "" {
		t.Skip("set SATQUIC_ATTACK=partial or silent to run")
	}
	conns, streams, size, sent := 4, 100, uint64(2<<20), uint64(2<<20-1)
	if attack == "silent" {
		conns, streams, size, sent = 200, 100, 100, 0
	} else if attack != "partial" {
		t.Fatalf("unknown attack %q", attack)
	}
	conns, streams = envInt("SATQUIC_ATTACK_CONNS", conns), envInt("SATQUIC_ATTACK_STREAMS", streams)
	pid, addr := startServeProcess(t, t.TempDir(), strings.Fields(os.Getenv("SATQUIC_ATTACK_ARGS"))...)
	t.Logf("serve pid %d on %s; before: %s", pid, addr, procMemory(t, pid))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	var ends sync.WaitGroup
	var resets resetCounts
	for range conns {
		c, err := quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{http3.NextProtoH3}}, &quic.Config{MaxIdleTimeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseWithError(0, "")
		for range streams {
			st, err := c.OpenStreamSync(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ends.Go(func() { resets.add(hostileStream(st, size, sent)) })
		}
	}
	t.Logf("%d streams opened in %v", conns*streams, time.Since(start).Round(time.Millisecond))
	time.Sleep(10*time.Second - time.Since(start))
	mem := procMemory(t, pid)
	t.Logf("after 10 s: %s; streams reset so far: %s", mem, resets.String())
	time.Sleep(5 * time.Second)
	t.Logf("after 15 s: %s; streams reset so far: %s", procMemory(t, pid), resets.String())
	limit := int64(200)
	if v := os.Getenv("SATQUIC_ATTACK_MAX_MB"); v != "" {
		limit, _ = strconv.ParseInt(v, 10, 64)
	}
	if mem.hwm > limit<<20 {
		t.Errorf("serve's peak resident memory %d MB is above %d MB", mem.hwm>>20, limit)
	}
	cancel()
}

// envInt returns the integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// hostileStream writes a HEADERS frame that announces size bytes and
// sends sent of them, then waits for the server to reset the stream, and
// returns the reset's code (-1 for another end).
func hostileStream(st *quic.Stream, size, sent uint64) int64 {
	b := []byte{0x01}
	b = appendQUICVarint(b, size)
	b = append(b, bytes.Repeat([]byte{'a'}, int(sent))...)
	_, _ = st.Write(b)
	_, err := st.Read(make([]byte, 1))
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote {
		return int64(se.ErrorCode)
	}
	return -1
}

// appendQUICVarint appends v as a QUIC variable-length integer (RFC 9000
// section 16).
func appendQUICVarint(b []byte, v uint64) []byte {
	switch {
	case v < 1<<6:
		return append(b, byte(v))
	case v < 1<<14:
		return append(b, byte(v>>8)|0x40, byte(v))
	case v < 1<<30:
		return append(b, byte(v>>24)|0x80, byte(v>>16), byte(v>>8), byte(v))
	}
	return append(b, byte(v>>56)|0xc0, byte(v>>48), byte(v>>40), byte(v>>32), byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// resetCounts counts the hostile streams' ends by code.
type resetCounts struct {
	mu sync.Mutex
	n  map[int64]int
}

func (r *resetCounts) add(code int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[int64]int{}
	}
	r.n[code]++
}

func (r *resetCounts) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for code, n := range r.n {
		name := "other"
		if code >= 0 {
			name = http3.ErrCode(code).String()
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, name))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// buildSatquic returns the satquic binary the process tests run:
// SATQUIC_ATTACK_BIN if set (to measure an older one), else one built from
// this tree.
func buildSatquic(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("SATQUIC_ATTACK_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "satquic")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startServeProcess runs "satquic serve --dir dir" with the extra flags on
// a loopback port until the test ends, and returns its pid and address.
func startServeProcess(t *testing.T, dir string, extra ...string) (int, string) {
	t.Helper()
	bin := buildSatquic(t)
	args := append([]string{"serve", "--dir", dir, "--addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var report []string
	addrc := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		banner := regexp.MustCompile(` on (127\.0\.0\.1:\d+) `)
		for lines.Scan() {
			if m := banner.FindStringSubmatch(lines.Text()); m != nil {
				addrc <- m[1]
			}
			report = append(report, lines.Text())
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		<-done
		t.Logf("serve's report:\n%s\nits stderr (last lines):\n%s", strings.Join(report, "\n"), lastLines(stderr.String(), 5))
	})
	select {
	case addr := <-addrc:
		return cmd.Process.Pid, addr
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
		return 0, ""
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// memoryUse is a process's resident memory now and at its peak, in bytes.
type memoryUse struct{ rss, hwm int64 }

func (m memoryUse) String() string {
	return fmt.Sprintf("VmRSS %d MB, VmHWM %d MB", m.rss>>20, m.hwm>>20)
}

// procMemory reads VmRSS and VmHWM from /proc/pid/status.
func procMemory(t *testing.T, pid int) memoryUse {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var m memoryUse
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb << 10
		case "VmHWM:":
			m.hwm = kb << 10
		}
	}
	return m
}
