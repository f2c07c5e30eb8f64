package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The bulk protocol of "satquic bench bulk" (bench/bulk_proto.go in
// satquic's source), spoken by quic-go: the client opens a bidirectional
// stream and sends the size it wants as 8 bytes, big endian; the server
// answers with that many bytes and ends the stream. A server child
// prints {"listening":"HOST:PORT"}, then a memory report for every "mem"
// line of its standard input, and exits when its standard input ends; a
// client prints one JSON report.

// bulkALPN must match satquic's bench.BulkALPN.
const bulkALPN = "satquic-bulk"

// maxBulkSize bounds a request, as satquic's side does.
const maxBulkSize = 1 << 40

// bulkIdleTimeout matches satquic's side: idle connections outlive the
// opening of the last one on a busy machine.
const bulkIdleTimeout = 5 * time.Minute

// bulkChunk is what the server writes over and over: 1 MiB of the same
// random block the byte server uses.
var bulkChunk = func() []byte {
	b := make([]byte, 1<<20)
	for i := 0; i < len(b); i += len(block) {
		copy(b[i:], block)
	}
	return b
}()

// bulkReadBuffer is the size of the client's reads, as on satquic's side.
const bulkReadBuffer = 256 << 10

func writeBulkRequest(w io.Writer, size int64) error {
	_, err := w.Write(binary.BigEndian.AppendUint64(nil, uint64(size)))
	return err
}

func parseBulkRequest(r io.Reader) (int64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("bulk request: %w", err)
	}
	n := binary.BigEndian.Uint64(b[:])
	if n > maxBulkSize {
		return 0, fmt.Errorf("bulk request: %d bytes is more than %d", n, int64(maxBulkSize))
	}
	return int64(n), nil
}

func writeBulk(w io.Writer, n int64) error {
	for n > 0 {
		k := min(n, int64(len(bulkChunk)))
		if _, err := w.Write(bulkChunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

func readBulk(r io.Reader) (int64, error) {
	buf := make([]byte, bulkReadBuffer)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// memReport is the server's memory after a collection that returned free
// memory to the system, as satquic's side measures its own.
type memReport struct {
	Conns      int    `json:"conns"`
	HeapBytes  uint64 `json:"heap_bytes"`
	StackBytes uint64 `json:"stack_bytes"`
	RSSBytes   uint64 `json:"rss_bytes"`
}

func measureMem(conns int) memReport {
	debug.FreeOSMemory()
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	metrics.Read(s)
	r := memReport{Conns: conns, RSSBytes: selfRSS()}
	if s[0].Value.Kind() == metrics.KindUint64 {
		r.HeapBytes = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		r.StackBytes = s[1].Value.Uint64()
	}
	return r
}

// selfRSS is VmRSS from /proc/self/status in bytes, 0 if unknown.
func selfRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(b) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest)
			if len(f) == 2 && string(f[1]) == "kB" {
				if kb, err := strconv.ParseUint(string(f[0]), 10, 64); err == nil && kb < 1<<40 {
					return kb << 10
				}
			}
			return 0
		}
	}
	return 0
}

// jsonLines writes JSON lines from several goroutines.
type jsonLines struct {
	mu sync.Mutex
	w  io.Writer
}

func (j *jsonLines) write(v any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	_ = json.NewEncoder(j.w).Encode(v)
}

// serveMemRequests answers "mem" lines of stdin until it ends.
func serveMemRequests(stdin io.Reader, out *jsonLines, conns func() int) {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if string(bytes.TrimSpace(sc.Bytes())) == "mem" {
			out.write(measureMem(conns()))
		}
	}
}

// untilStdinEnds is a context that ends with SIGINT, SIGTERM or the end of
// standard input, the bulk children's lifeline.
func untilStdinEnds(stdin io.Reader) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		stop()
	}()
	return ctx, stop
}

// startProfile writes a CPU profile to path until the returned function
// is called; an empty path writes none.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
