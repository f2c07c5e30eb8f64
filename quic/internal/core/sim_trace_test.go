package core

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// TestSimTraceDownload prints, every 100 ms of virtual time, what limits
// the sender of a download: the congestion window and the bytes in
// flight, the controller's phase and slow start threshold, the RTT, the
// pacing rate, the losses, the connection and stream flow control credit,
// the bytes the application wrote that wait to be sent, the packets
// received (ACKs), the rate the client received at and the uplink's
// packets in flight. It is a measurement tool, run on demand:
//
//	SATQUIC_SIM_TRACE=geo-large go test ./quic/internal/core -run TestSimTraceDownload -v
//
// Other variables: SATQUIC_SIM_TRACE_SIZE, the size in bytes (default
// 100 MB); SATQUIC_SIM_TRACE_SEED, the seed (default 42);
// SATQUIC_SIM_TRACE_DEFAULTS, keep the default configuration instead of
// TestSimGeoLarge's (1452-byte datagrams, an ACK every 32 packets);
// SATQUIC_SIM_TRACE_BIGWINDOW, start the receive windows at their maximum,
// which takes flow control out of the picture; SATQUIC_SIM_TRACE_EARLY,
// list every datagram of the first 2 s; SATQUIC_SIM_TRACE_MEM, read the
// Go heap's live data at every sample and report its peak, with the part the links'
// packets in flight take (what the two endpoints cost is the rest);
// SATQUIC_SIM_TRACE_CC=bbr or newreno, the controller of both ends (BBR's
// state and model are then printed too); SATQUIC_SIM_TRACE_FEC=hide, FEC
// at both ends under the hide policy.
func TestSimTraceDownload(t *testing.T) {
	name := os.Getenv("SATQUIC_SIM_TRACE")
	if name == "" {
		t.Skip("set SATQUIC_SIM_TRACE to a profile name")
	}
	size, seed := 100_000_000, uint64(42)
	if s := os.Getenv("SATQUIC_SIM_TRACE_SIZE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("SATQUIC_SIM_TRACE_SIZE %q: want a positive byte count", s)
		}
		size = n
	}
	if s := os.Getenv("SATQUIC_SIM_TRACE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SATQUIC_SIM_TRACE_SEED %q: %v", s, err)
		}
		seed = n
	}
	prof := profile(t, name).WithSeed(seed)
	ccfg, scfg := testConfigs(t, 50)
	for _, c := range []*Config{ccfg, scfg} {
		if os.Getenv("SATQUIC_SIM_TRACE_DEFAULTS") == "" {
			c.MaxDatagramSize = 1452
			c.AckElicitingThreshold = 32
		}
		switch os.Getenv("SATQUIC_SIM_TRACE_CC") {
		case "bbr":
			c.Recovery.Algorithm = recovery.BBR
		case "newreno":
			c.Recovery.Algorithm = recovery.NewReno
		}
		if os.Getenv("SATQUIC_SIM_TRACE_FEC") == "hide" {
			c.FEC = &FECConfig{}
			c.Recovery.FECPolicy = recovery.FECHide
		}
		if os.Getenv("SATQUIC_SIM_TRACE_BIGWINDOW") != "" {
			c.InitialStreamReceiveWindow = DefaultMaxStreamReceiveWindow
			c.InitialConnReceiveWindow = DefaultMaxConnReceiveWindow
		}
	}
	early := os.Getenv("SATQUIC_SIM_TRACE_EARLY") != ""
	d := newDownload(t, size)
	sp := newSimPair(t, prof, seed, ccfg, scfg, func(e netsim.Event) {
		if early && e.At < 2*time.Second {
			t.Log(e)
		}
	})
	tr := &downloadTrace{t: t, sp: sp, d: d, mem: os.Getenv("SATQUIC_SIM_TRACE_MEM") != ""}
	sp.server.app = func(now time.Duration, c *Conn) {
		d.server(now, c)
		tr.sample(now, c)
	}
	read := d.client(nil)
	sp.client.app = func(now time.Duration, c *Conn) {
		if !d.haveID {
			for _, ev := range sp.client.events {
				if ev.Kind == EventStreamOpened {
					d.clientID, d.haveID = ev.StreamID, true
				}
			}
		}
		read(now, c)
	}
	sp.run(t, func() bool { return d.done }, 120*time.Second)
	t.Logf("%d bytes in %v", size, d.doneAt)
	if tr.mem {
		t.Logf("peak heap in use %.1f MB at %v: the links' %d packets in flight about %.1f MB (%d B each), the server's send buffer %.1f MB",
			float64(tr.peakHeap)/1e6, tr.peakAt, tr.peakLinkPkts, float64(tr.peakLinkPkts*linkPacketBytes)/1e6, linkPacketBytes,
			float64(tr.peakSendBuf)/1e6)
	}
	logStats(t, sp)
}

// downloadTrace samples the server of a download every 100 ms.
type downloadTrace struct {
	t        *testing.T
	sp       *simPair
	d        *download
	next     time.Duration
	lastAt   time.Duration
	lastPkts uint64
	lastDown int64

	mem          bool
	peakHeap     uint64
	peakAt       time.Duration
	peakLinkPkts int64
	peakSendBuf  uint64 // the server's stream send buffer then
}

// linkPacketBytes is about what a packet in flight on a simulated link
// takes on the heap: a 1452-byte datagram's buffer in Go's 1536-byte size
// class, and its event.
const linkPacketBytes = 1536 + 64

func (tr *downloadTrace) sample(now time.Duration, c *Conn) {
	if now < tr.next {
		return
	}
	tr.next = now - now%(100*time.Millisecond) + 100*time.Millisecond
	st := c.Stats()
	cs := c.sender.ControllerState()
	var credit, unsent uint64
	if s := c.streams.m[tr.d.id]; s != nil && s.send != nil {
		credit = s.send.maxData - min(s.send.buf.next, s.send.maxData)
		unsent = s.send.buf.written - s.send.buf.next
	}
	up, down := tr.sp.path.Stats()
	if tr.mem {
		// Live data only: collect first.
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > tr.peakHeap {
			tr.peakHeap, tr.peakAt, tr.peakLinkPkts = ms.HeapInuse, now, up.InFlight+down.InFlight
			tr.peakSendBuf = 0
			if s := c.streams.m[tr.d.id]; s != nil && s.send != nil {
				tr.peakSendBuf = s.send.buf.buffered()
			}
		}
	}
	var downRate float64
	if now > tr.lastAt {
		downRate = float64(down.DeliveredBytes-tr.lastDown) * 8 / (now - tr.lastAt).Seconds() / 1e6
	}
	tr.t.Logf("%6.2fs cwnd %9d infl %9d %-24v ssth %11d srtt %4dms lat %4dms rate %5.0fMb lost %5d conncred %9d strcred %9d unsent %9d acks %4d down %4.0fMb upq %d",
		now.Seconds(), st.CongestionWindow, st.BytesInFlight, cs.Phase, cs.SSThresh, st.SmoothedRTT.Milliseconds(),
		st.LatestRTT.Milliseconds(), float64(st.PacingRate)*8/1e6, st.PacketsLost,
		c.flow.sendCredit(), credit, unsent, st.PacketsReceived-tr.lastPkts, downRate, up.InFlight)
	if b := cs.BBR; b.State != recovery.BBRNone {
		tr.t.Logf("        bbr %-15v bw %5.0fMb maxbw %5.0fMb minrtt %4dms inflight_hi %9d inflight_lo %9d gains %.2f/%.2f rounds %d cycles %d",
			b.State, float64(b.Bandwidth)*8/1e6, float64(b.MaxBandwidth)*8/1e6, b.MinRTT.Milliseconds(), b.InflightHi, b.InflightLo,
			b.PacingGain, b.CwndGain, b.RoundCount, b.CycleCount)
	}
	tr.lastAt, tr.lastPkts, tr.lastDown = now, st.PacketsReceived, down.DeliveredBytes
}
