package core

import (
	"encoding/binary"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// Requests of several kept-alive flows through one tunnel connection, as
// the tunnel benchmark runs them: each flow asks (a small datagram up),
// the other end answers with a 10 kB response (full datagrams down) and
// the asking end acknowledges every second datagram, as an inner TCP
// does. A flow asks again what it misses after flowRetry, as the inner
// TCP's retransmission timeout would.

const (
	flowCount     = 5
	flowRequest   = 139
	flowAck       = 54
	flowSegments  = 8
	flowSegment   = 1380
	flowLast      = 700
	flowRetry     = 200 * time.Millisecond
	flowTagLength = 6 // flow byte, request number, segment byte
)

// flowState is one flow's request in progress at the asking end.
type flowState struct {
	id           uint32
	begun, asked time.Duration
	got          [flowSegments]bool
	received     int
	times        []time.Duration
}

// flowsRun is what the asking end measured.
type flowsRun struct {
	// times are every request's completion time.
	times        []time.Duration
	client, serv FECStats
}

// runFlowsOver runs n requests on each of flowCount flows over prof,
// both ends with the tunnel's FEC defaults (policy auto, 10% overhead)
// and path MTU discovery, as a tunnel's connection has. qlogClient and
// qlogServer, if set, receive each end's qlog.
func runFlowsOver(t *testing.T, prof netsim.Profile, n int, fc FECConfig, qlogClient, qlogServer io.Writer) flowsRun {
	t.Helper()
	ccfg, scfg := testConfigs(t, 31)
	for _, c := range []*Config{ccfg, scfg} {
		f := fc
		c.FEC, c.Recovery.FECPolicy, c.EnableDatagrams = &f, recovery.FECAuto, true
		c.DatagramSendQueue, c.DatagramReceiveQueue = 1024, 1024
	}
	ccfg.Qlog, scfg.Qlog = qlogClient, qlogServer
	var (
		flows [flowCount]flowState
		done  int
		r     flowsRun
	)
	sp := newSimPair(t, prof, 9, ccfg, scfg, nil)
	send := func(now time.Duration, c *Conn, b []byte) {
		if err := c.SendDatagram(now, b); err != nil {
			t.Fatalf("SendDatagram of %d bytes: %v", len(b), err)
		}
	}
	ask := func(now time.Duration, c *Conn, f int, fresh bool) {
		fl := &flows[f]
		if fresh {
			fl.id++
			fl.begun, fl.got, fl.received = now, [flowSegments]bool{}, 0
		}
		b := make([]byte, flowRequest)
		b[0] = byte(f)
		binary.BigEndian.PutUint32(b[1:], fl.id)
		send(now, c, b)
		fl.asked = now
	}
	sp.server.app = func(now time.Duration, c *Conn) {
		for {
			b, ok := c.ReceiveDatagram()
			if !ok {
				return
			}
			if len(b) != flowRequest {
				continue // an acknowledgement
			}
			full := min(flowSegment, c.MaxDatagramPayloadSize())
			for i := range flowSegments {
				d := make([]byte, full)
				if i == flowSegments-1 {
					d = d[:flowLast]
				}
				copy(d, b[:5])
				d[5] = byte(i)
				send(now, c, d)
			}
		}
	}
	sp.client.app = func(now time.Duration, c *Conn) {
		if !c.HandshakeConfirmed() || done == flowCount {
			return
		}
		if flows[0].id == 0 {
			for f := range flowCount {
				ask(now, c, f, true)
			}
		}
		for {
			b, ok := c.ReceiveDatagram()
			if !ok {
				break
			}
			if len(b) < flowTagLength || int(b[0]) >= flowCount {
				continue
			}
			fl := &flows[b[0]]
			if binary.BigEndian.Uint32(b[1:]) != fl.id || fl.got[b[5]] {
				continue
			}
			fl.got[b[5]] = true
			if fl.received++; fl.received%2 == 0 || fl.received == flowSegments {
				send(now, c, make([]byte, flowAck))
			}
		}
		for f := range flows {
			fl := &flows[f]
			switch {
			case fl.id == 0 || len(fl.times) == n:
			case fl.received == flowSegments:
				fl.times = append(fl.times, now-fl.begun)
				if len(fl.times) == n {
					done++
					continue
				}
				ask(now, c, f, true)
			case now-fl.asked >= flowRetry:
				ask(now, c, f, false)
			}
		}
	}
	sp.client.tick = 10 * time.Millisecond
	sp.run(t, func() bool { return done == flowCount }, time.Duration(n)*time.Second)
	for f := range flows {
		r.times = append(r.times, flows[f].times...)
	}
	r.client, r.serv = sp.client.conn.Stats().FEC, sp.server.conn.Stats().FEC
	return r
}

// starlinkOutageAt is the starlink profile without its random loss, whose
// outage (and the 3 s of longer delay that start with it) comes once, at
// at, both ways at once: the only losses are the outage's.
func starlinkOutageAt(t *testing.T, at time.Duration) netsim.Profile {
	t.Helper()
	prof := profile(t, "starlink")
	for _, l := range []*netsim.LinkConfig{&prof.Down, &prof.Up} {
		l.Loss = ""
		l.Outages = []netsim.Outage{{Start: at, Duration: 40 * time.Millisecond}}
		l.DelaySteps = []netsim.DelayStep{{At: at, Delay: 40 * time.Millisecond}, {At: at + 3*time.Second, Delay: 25 * time.Millisecond}}
	}
	return prof
}

// TestSimFlowsOverOutage: five flows of 10 kB requests through a tunnel
// connection over starlink, whose outage takes a burst of responses and
// requests. The phase of the requests against the outage decides what
// it takes; at 15.0901 s (the worst of sixty phases 1.7 ms apart) the
// server answers the requests the client's repairs rebuilt, and each of
// its packets moves its probe timeout on: the responses the outage took
// waited for the acknowledgement of those packets, and the slowest request
// took 287 ms. Watched from their own send time, the sources are overdue
// a probe timeout after it, and the slowest takes 222 ms. The run is
// deterministic in virtual time.
func TestSimFlowsOverOutage(t *testing.T) {
	r := runFlowsOver(t, starlinkOutageAt(t, 15090100*time.Microsecond), 300, FECConfig{MaxOverhead: 0.1}, nil, nil)
	sorted := slices.Sorted(slices.Values(r.times))
	worst := sorted[len(sorted)-1]
	t.Logf("%d requests, median %v, slowest %v; sources overdue: client %d, server %d",
		len(sorted), sorted[len(sorted)/2], worst, r.client.OverdueSources, r.serv.OverdueSources)
	if r.serv.OverdueSources == 0 {
		t.Errorf("no source of the server's was overdue")
	}
	if worst > 230*time.Millisecond {
		t.Errorf("slowest request took %v, want at most 230ms", worst)
	}
}
