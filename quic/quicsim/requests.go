package quicsim

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/coresim"
)

// RequestsConfig describes requests made on one connection as an HTTP
// load generator with a kept-alive connection makes them (HIRT's wrk runs
// over Starlink): Parallel flows, each waiting for its previous response,
// then Gap, before its next request. HTTP/3 multiplexes the flows as
// streams of the one connection, so its FEC protects them together, as
// HIRT's tunnel protects its parallel flows together.
type RequestsConfig struct {
	// DownloadConfig gives the path, seeds, congestion control, datagram
	// size, FEC and the limit in simulated time; its Size is the size of
	// each response.
	DownloadConfig
	// Requests is how many requests are made, over all flows.
	Requests int
	// Parallel is the number of request flows under way at once (0: 1).
	Parallel int
	// Gap is the pause between a response and the flow's next request.
	Gap time.Duration
}

// RequestsResult is the outcome of a run of requests.
type RequestsResult struct {
	// Times are the request completion times: from the request's
	// sending to the last byte of its response, in order of completion.
	Times []time.Duration
	// Handshake is when the client's handshake completed, Elapsed the
	// time from the first request to the last response.
	Handshake, Elapsed time.Duration
	// Up and Down are what the links did.
	Up, Down netsim.LinkStats
	// Server and Client are the endpoints' connection statistics.
	Server, Client core.Stats
}

// Requests runs cfg.Requests hq-interop requests for cfg.Size bytes each
// on one connection. It fails when the connection closes, the network
// goes idle or the limit passes first.
func Requests(cfg RequestsConfig) (RequestsResult, error) {
	if cfg.Parallel == 0 {
		cfg.Parallel = 1
	}
	if cfg.Size < 0 || cfg.Requests < 1 || cfg.Gap < 0 || cfg.Parallel < 1 {
		return RequestsResult{}, fmt.Errorf("quicsim: %d requests of %d bytes in %d flows, gap %v", cfg.Requests, cfg.Size, cfg.Parallel, cfg.Gap)
	}
	if cfg.ZeroRTT {
		return RequestsResult{}, fmt.Errorf("quicsim: ZeroRTT is for Download; Requests measures one connection")
	}
	ccfg, scfg, err := configs(cfg.DownloadConfig)
	if err != nil {
		return RequestsResult{}, err
	}
	w, err := newWorld(cfg.DownloadConfig, ccfg, scfg, 0)
	if err != nil {
		return RequestsResult{}, err
	}
	cconn, sv, n := w.cconn, w.sv, w.n
	cl := newRequester(cconn, cfg)
	cl.App = cl.step
	runErr := w.run(cl, func() bool { return cl.done || cl.err != nil || sv.err != nil })
	res := RequestsResult{Times: cl.times, Handshake: cl.handshakeAt, Elapsed: cl.lastAt - cl.firstAt, Client: cconn.Stats()}
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

// requester makes the requests of a RequestsConfig in cfg.Parallel flows.
type requester struct {
	*endpoint
	conn        *core.Conn
	cfg         RequestsConfig
	buf         []byte
	handshakeAt time.Duration
	flows       []flow
	sent        int // requests sent over all flows
	firstAt     time.Duration
	lastAt      time.Duration
	times       []time.Duration
	done        bool
	err         error
}

// flow is one sequential request flow.
type flow struct {
	stream uint64
	open   bool          // a request is outstanding
	sentAt time.Duration // when it was sent
	nextAt time.Duration // when the next one may go
	got    int64
}

func newRequester(conn *core.Conn, cfg RequestsConfig) *requester {
	return &requester{
		endpoint: coresim.NewClient(conn),
		conn:     conn,
		cfg:      cfg,
		buf:      make([]byte, 64<<10),
		flows:    make([]flow, cfg.Parallel),
	}
}

// Poll wakes the requester at the end of a flow's gap as well as at the
// connection's timers.
func (r *requester) Poll(now time.Duration) ([]netsim.Datagram, time.Duration, bool) {
	out, next, ok := r.endpoint.Poll(now)
	if r.done || r.err != nil || r.sent == r.cfg.Requests {
		return out, next, ok
	}
	for i := range r.flows {
		f := &r.flows[i]
		if !f.open && f.nextAt > now && (!ok || f.nextAt < next) {
			next, ok = f.nextAt, true
		}
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
	for i := range r.flows {
		if r.err = r.stepFlow(now, &r.flows[i]); r.err != nil || r.done {
			return
		}
	}
}

// stepFlow sends a flow's next request when its gap is over and reads its
// response; with no gap, the next request goes at once.
func (r *requester) stepFlow(now time.Duration, f *flow) error {
	for !r.done {
		if !f.open {
			if now < f.nextAt || r.sent == r.cfg.Requests {
				return nil
			}
			if err := r.send(now, f); err != nil {
				return err
			}
		}
		complete, err := r.read(now, f)
		if err != nil || !complete {
			return err
		}
		if err := r.finish(now, f); err != nil {
			return err
		}
	}
	return nil
}

// read takes in what arrived of a flow's response and reports whether it
// is complete.
func (r *requester) read(now time.Duration, f *flow) (bool, error) {
	for {
		n, err := r.conn.StreamRead(now, f.stream, r.buf)
		f.got += int64(n)
		if err == io.EOF {
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("quicsim: reading a response after %d bytes: %w", f.got, err)
		}
		if n == 0 {
			return false, nil
		}
	}
}

// send opens the next request's stream and writes the request.
func (r *requester) send(now time.Duration, f *flow) error {
	id, err := r.conn.OpenStream(now, true)
	if err != nil {
		return fmt.Errorf("quicsim: opening request %d: %w", r.sent+1, err)
	}
	req := "GET /" + strconv.FormatInt(r.cfg.Size, 10) + "\r\n"
	if n, err := r.conn.StreamWrite(id, []byte(req)); err != nil || n != len(req) {
		return fmt.Errorf("quicsim: writing request %d: %d of %d bytes, %v", r.sent+1, n, len(req), err)
	}
	if err := r.conn.CloseWrite(id); err != nil {
		return fmt.Errorf("quicsim: ending request %d: %w", r.sent+1, err)
	}
	if r.sent == 0 {
		r.firstAt = now
	}
	r.sent++
	f.stream, f.open, f.sentAt, f.got = id, true, now, 0
	return nil
}

// finish records a complete response.
func (r *requester) finish(now time.Duration, f *flow) error {
	if f.got != r.cfg.Size {
		return fmt.Errorf("quicsim: a response has %d bytes, want %d", f.got, r.cfg.Size)
	}
	r.times = append(r.times, now-f.sentAt)
	r.lastAt = now
	f.open = false
	f.nextAt = now + r.cfg.Gap
	if len(r.times) == r.cfg.Requests {
		r.done = true
		r.conn.Close(now, 0, "")
	}
	return nil
}
