package quic

import (
	"bufio"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/satquic/satquic/quic/internal/wire"
)

// qlogBufferSize is the buffer between a connection's core, which writes
// one qlog record per packet under the connection's mutex, and the file: a
// write system call per record would slow a fast transfer down.
const qlogBufferSize = 64 << 10

// qlogSink is the writer a connection's core writes its qlog to. A
// client's core picks its original Destination Connection ID, which names
// the qlog, as it starts: what it writes before attach is held until then.
// Once the destination fails, the sink fails every write, and the core
// stops writing its qlog.
type qlogSink struct {
	open    func(odcid []byte) (io.WriteCloser, error)
	pending []byte
	w       *bufio.Writer
	dst     io.WriteCloser
	err     error
	done    bool // attached, or given up
}

// newQlogSink returns the sink of a new connection when conf asks for a
// qlog (Tracer, QlogDir or the QLOGDIR environment variable), else nil.
func newQlogSink(conf *Config, isClient bool) *qlogSink {
	if conf != nil && conf.Tracer != nil {
		tracer := conf.Tracer
		return &qlogSink{open: func(odcid []byte) (io.WriteCloser, error) {
			w := tracer(TraceInfo{IsClient: isClient, OriginalDestConnID: odcid})
			if w == nil {
				return nil, errNoQlog
			}
			return w, nil
		}}
	}
	dir := ""
	if conf != nil {
		dir = conf.QlogDir
	}
	if dir == "" {
		dir = os.Getenv("QLOGDIR")
	}
	if dir == "" {
		return nil
	}
	role := "server"
	if isClient {
		role = "client"
	}
	return &qlogSink{open: func(odcid []byte) (io.WriteCloser, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return os.Create(filepath.Join(dir, hex.EncodeToString(odcid)+"_"+role+".sqlog"))
	}}
}

// errNoQlog: the Tracer declined to trace a connection.
var errNoQlog = errors.New("quic: no qlog for this connection")

// attach opens the destination of the qlog of the connection named odcid
// and writes what the core wrote so far.
func (s *qlogSink) attach(odcid wire.ConnectionID) {
	if s == nil || s.done {
		return
	}
	s.done = true
	dst, err := s.open(odcid.Bytes())
	if err != nil {
		s.err = err
		s.pending = nil
		return
	}
	s.dst = dst
	s.w = bufio.NewWriterSize(dst, qlogBufferSize)
	if len(s.pending) > 0 {
		_, s.err = s.w.Write(s.pending)
		s.pending = nil
	}
}

// Write takes one qlog record from the core.
func (s *qlogSink) Write(p []byte) (int, error) {
	switch {
	case s.err != nil:
		return 0, s.err
	case s.w == nil:
		s.pending = append(s.pending, p...)
		return len(p), nil
	}
	n, err := s.w.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// close flushes and closes the destination once the connection ended; a
// sink never attached (its connection never started) opens nothing.
func (s *qlogSink) close() {
	if s == nil {
		return
	}
	s.done = true
	s.pending = nil
	if s.dst == nil {
		return
	}
	if s.err == nil {
		s.err = s.w.Flush()
	}
	_ = s.dst.Close()
	s.dst, s.w = nil, nil
	if s.err == nil {
		s.err = os.ErrClosed
	}
}
