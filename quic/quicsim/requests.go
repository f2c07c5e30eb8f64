package quicsim

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/core"
)

// RequestsConfig describes requests made one after the other on one
// connection, as an HTTP load generator with a kept-alive connection makes
// them (HIRT's wrk runs over Starlink): each request waits for the
// previous response, then Gap.
type RequestsConfig struct {
	// DownloadConfig gives the path, seeds, congestion control, datagram
	// size, FEC and the limit in simulated time; its Size is the size of
	// each response.
	DownloadConfig
	// Requests is how many requests are made.
	Requests int
	// Gap is the pause between a response and the next request.
	Gap time.Duration
}

// RequestsResult is the outcome of a run of requests.
type RequestsResult struct {
	// Times are the request completion times: from the request's
	// sending to the last byte of its response, in order.
	Times []time.Duration
	// Handshake is when the client's handshake completed.
	Handshake time.Duration
	// Up and Down are what the links did.
	Up, Down netsim.LinkStats
	// Server and Client are the endpoints' connection statistics.
	Server, Client core.Stats
}

// Requests runs cfg.Requests hq-interop requests for cfg.Size bytes each
// on one connection. It fails when the connection closes, the network
// goes idle or the limit passes first.
func Requests(cfg RequestsConfig) (RequestsResult, error) {
	if cfg.Size < 0 || cfg.Requests < 1 || cfg.Gap < 0 {
		return RequestsResult{}, fmt.Errorf("quicsim: %d requests of %d bytes, gap %v", cfg.Requests, cfg.Size, cfg.Gap)
	}
	w, err := newWorld(cfg.DownloadConfig)
	if err != nil {
		return RequestsResult{}, err
	}
	cconn, sv, n := w.cconn, w.sv, w.n
	cl := &requester{endpoint: endpoint{conn: cconn, peer: serverAddr}, cfg: cfg, buf: make([]byte, 64<<10)}
	cl.app = cl.step
	runErr := w.run(cl, func() bool { return cl.done || cl.err != nil || sv.err != nil })
	res := RequestsResult{Times: cl.times, Handshake: cl.handshakeAt, Client: cconn.Stats()}
	res.Up, res.Down = w.path.Stats()
	if sv.conn != nil {
		res.Server = sv.conn.Stats()
	}
	switch {
	case cl.err != nil:
		return res, cl.err
	case sv.err != nil:
		return res, sv.err
	case runErr != nil:
		return res, fmt.Errorf("quicsim: after %d of %d requests at %v: %w (client: %v)", len(cl.times), cfg.Requests, n.Now(), runErr, cconn.Err())
	}
	return res, nil
}

// requester makes the requests of a RequestsConfig one after the other.
type requester struct {
	endpoint
	cfg         RequestsConfig
	buf         []byte
	handshakeAt time.Duration
	stream      uint64
	open        bool          // a request is outstanding
	sentAt      time.Duration // when it was sent
	nextAt      time.Duration // when the next one may go
	got         int64
	times       []time.Duration
	done        bool
	err         error
}

// Poll wakes the requester at the end of a gap as well as at the
// connection's timers.
func (r *requester) Poll(now time.Duration) ([]netsim.Datagram, time.Duration, bool) {
	out, next, ok := r.endpoint.Poll(now)
	if !r.open && !r.done && r.err == nil && r.nextAt > now && (!ok || r.nextAt < next) {
		return out, r.nextAt, true
	}
	return out, next, ok
}

func (r *requester) step(now time.Duration, events []core.Event) {
	for _, ev := range events {
		switch ev.Kind {
		case core.EventHandshakeComplete:
			r.handshakeAt = now
		case core.EventClosed:
			if !r.done {
				r.err = fmt.Errorf("quicsim: client connection closed after %d of %d requests: %v", len(r.times), r.cfg.Requests, ev.Err)
			}
		}
	}
	if r.err != nil || r.done || !r.conn.HandshakeComplete() {
		return
	}
	if !r.open {
		if now < r.nextAt {
			return
		}
		if r.err = r.send(now); r.err != nil {
			return
		}
	}
	for {
		n, err := r.conn.StreamRead(r.stream, r.buf)
		r.got += int64(n)
		if err == io.EOF {
			r.finish(now)
			return
		}
		if err != nil {
			r.err = fmt.Errorf("quicsim: reading response %d after %d bytes: %w", len(r.times)+1, r.got, err)
			return
		}
		if n == 0 {
			return
		}
	}
}

// send opens the next request's stream and writes the request.
func (r *requester) send(now time.Duration) error {
	id, err := r.conn.OpenStream(true)
	if err != nil {
		return fmt.Errorf("quicsim: opening request %d: %w", len(r.times)+1, err)
	}
	req := "GET /" + strconv.FormatInt(r.cfg.Size, 10) + "\r\n"
	if n, err := r.conn.StreamWrite(id, []byte(req)); err != nil || n != len(req) {
		return fmt.Errorf("quicsim: writing request %d: %d of %d bytes, %v", len(r.times)+1, n, len(req), err)
	}
	if err := r.conn.CloseWrite(id); err != nil {
		return fmt.Errorf("quicsim: ending request %d: %w", len(r.times)+1, err)
	}
	r.stream, r.open, r.sentAt, r.got = id, true, now, 0
	return nil
}

// finish records a complete response.
func (r *requester) finish(now time.Duration) {
	if r.got != r.cfg.Size {
		r.err = fmt.Errorf("quicsim: response %d has %d bytes, want %d", len(r.times)+1, r.got, r.cfg.Size)
		return
	}
	r.times = append(r.times, now-r.sentAt)
	r.open = false
	r.nextAt = now + r.cfg.Gap
	if len(r.times) == r.cfg.Requests {
		r.done = true
		r.conn.Close(0, "")
	}
}
