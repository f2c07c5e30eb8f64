// Package bulkproto is the wire and child-process protocol of "satquic
// bench bulk" (package bench), which satquic's and kernel TCP's peers and
// internal/cmd/quicgo-peer's quic-go peers speak alike, so that the stacks
// are measured on the same bytes:
//
//   - on the wire, the client opens a bidirectional stream (QUIC) or a
//     TLS connection (TCP) and sends the size it wants as 8 bytes, big
//     endian; the server answers with that many bytes of Chunk, repeated,
//     and ends the stream (or closes the connection). ALPN ALPN.
//   - a server child prints {"listening":"HOST:PORT"} once it listens;
//     then, for each line "mem" it reads on its standard input, one
//     MemReport line; it exits when its standard input ends.
//   - a client child prints one report line when its download is done
//     (or, holding idle connections, once they are all open, and closes
//     them when its standard input ends).
package bulkproto

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
)

// ALPN is the ALPN of the bulk protocol, in every stack.
const ALPN = "satquic-bulk"

// MaxSize bounds what a request may ask for, so that a corrupted size
// fails at once rather than streaming for days.
const MaxSize = 1 << 40

// Chunk is what a bulk server writes, over and over: random bytes
// that nothing along the path could compress. 1 MiB, so that a write hands
// a stack enough to fill many packets.
var Chunk = func() []byte {
	b := make([]byte, 1<<20)
	// A fixed seed: the same bytes in every process and stack.
	r := rand.New(rand.NewChaCha8([32]byte{'s', 'a', 't', 'q', 'u', 'i', 'c'}))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}()

// ReadBuffer is the size of the client's reads, the same for every
// stack.
const ReadBuffer = 256 << 10

// WriteRequest asks for size bytes.
func WriteRequest(w io.Writer, size int64) error {
	_, err := w.Write(binary.BigEndian.AppendUint64(nil, uint64(size)))
	return err
}

// ParseRequest reads the size a client asks for.
func ParseRequest(r io.Reader) (int64, error) {
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, fmt.Errorf("bulk request: %w", err)
	}
	n := binary.BigEndian.Uint64(b[:])
	if n > MaxSize {
		return 0, fmt.Errorf("bulk request: %d bytes is more than %d", n, int64(MaxSize))
	}
	return int64(n), nil
}

// Write writes n bytes of Chunk to w.
func Write(w io.Writer, n int64) error {
	for n > 0 {
		k := min(n, int64(len(Chunk)))
		if _, err := w.Write(Chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// Read reads r to its end and counts the bytes.
func Read(r io.Reader) (int64, error) {
	buf := make([]byte, ReadBuffer)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// MemReport is a server's memory, measured after a garbage collection
// that also returned free memory to the system (debug.FreeOSMemory), so
// that two reports differ by what the server holds, not by when its
// collector last ran.
type MemReport struct {
	// Conns is the number of connections the server holds.
	Conns int `json:"conns"`
	// HeapBytes is the size of the live objects on the Go heap.
	HeapBytes uint64 `json:"heap_bytes"`
	// StackBytes is the memory of the goroutines' stacks.
	StackBytes uint64 `json:"stack_bytes"`
	// RSSBytes is the process's resident set (VmRSS), 0 where the
	// system does not say.
	RSSBytes uint64 `json:"rss_bytes"`
}

// GoBytes is the memory the Go runtime holds for the server's own state:
// live heap objects and goroutine stacks.
func (m MemReport) GoBytes() uint64 { return m.HeapBytes + m.StackBytes }

// MeasureMem collects garbage and reports the memory the process holds.
func MeasureMem(conns int) MemReport {
	debug.FreeOSMemory()
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/stacks:bytes"},
	}
	metrics.Read(s)
	r := MemReport{Conns: conns, RSSBytes: selfRSS()}
	if s[0].Value.Kind() == metrics.KindUint64 {
		r.HeapBytes = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		r.StackBytes = s[1].Value.Uint64()
	}
	return r
}

// selfRSS reads VmRSS from /proc/self/status, in bytes.
func selfRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	return parseVmRSS(b)
}

// parseVmRSS finds "VmRSS: N kB" in a /proc status file; 0 if absent.
func parseVmRSS(status []byte) uint64 {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0
		}
		kb, err := strconv.ParseUint(string(f[0]), 10, 64)
		if err != nil || kb > 1<<40 {
			return 0
		}
		return kb << 10
	}
	return 0
}

// ServeMemRequests answers every "mem" line of stdin with a MemReport of
// conns() connections, on out, and returns when stdin ends.
func ServeMemRequests(stdin io.Reader, out *JSONLines, conns func() int) {
	sc := bufio.NewScanner(stdin)
	for sc.Scan() {
		if string(bytes.TrimSpace(sc.Bytes())) == "mem" {
			out.Write(MeasureMem(conns()))
		}
	}
}

// JSONLines writes JSON lines to W from several goroutines.
type JSONLines struct {
	mu sync.Mutex
	W  io.Writer
}

// Write writes v as one line.
func (l *JSONLines) Write(v any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// A parent that stopped reading has gone; the child ends with its
	// standard input.
	_ = json.NewEncoder(l.W).Encode(v)
}
