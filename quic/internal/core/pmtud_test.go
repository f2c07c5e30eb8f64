package core

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// pmtuSettled reports whether both ends of a pair ended their path MTU
// search.
func (p *pair) pmtuSettled() bool {
	return p.server != nil && p.client.pmtu.phase == pmtuDone && p.server.pmtu.phase == pmtuDone
}

// dropAbove makes the path from the client to the server lose datagrams
// larger than mtu bytes, and counts them.
func dropAbove(p *pair, mtu int, dropped *int) {
	p.drop = func(toServer bool, _ int, d []byte) bool {
		if toServer && len(d) > mtu {
			*dropped++
			return true
		}
		return false
	}
}

// Once the handshake is confirmed, each end probes the largest size
// first; one acknowledged probe ends the search there.
func TestPMTUProbeRaisesSize(t *testing.T) {
	ccfg, scfg := testConfigs(t, 300)
	var qlog bytes.Buffer
	ccfg.Qlog = &qlog
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	if st := p.client.Stats().PathMTU; st.MaxDatagramSize != DefaultMaxDatagramSize {
		t.Fatalf("datagram size %d at confirmation, want %d", st.MaxDatagramSize, DefaultMaxDatagramSize)
	}
	p.mustRun(p.pmtuSettled, p.now+time.Second)
	for _, c := range []*Conn{p.client, p.server} {
		st := c.Stats()
		if st.PathMTU.MaxDatagramSize != DefaultMaxProbeDatagramSize || st.PathMTU.ProbesSent != 1 || st.PathMTU.ProbesLost != 0 {
			t.Errorf("client=%v: %+v, want 1452 after one probe", c.isClient, st.PathMTU)
		}
	}
	_, evs := parseQlog(t, qlog.Bytes())
	var updates []string
	for _, ev := range evs {
		if ev.Name == "recovery:mtu_updated" {
			updates = append(updates, formatMTUEvent(ev.Data))
		}
	}
	if want := []string{"1200->1452", "1452->1452 done"}; !slices.Equal(updates, want) {
		t.Errorf("qlog mtu_updated %v, want %v", updates, want)
	}
	// Data now goes in datagrams of the new size.
	id, _ := p.client.OpenStream(p.now, false)
	if _, err := p.client.StreamWrite(id, payload(5000, 1)); err != nil {
		t.Fatal(err)
	}
	d, ok := p.client.NextDatagram(p.now, nil)
	if !ok || len(d.Data) != DefaultMaxProbeDatagramSize {
		t.Errorf("data datagram of %d bytes, want %d", len(d.Data), DefaultMaxProbeDatagramSize)
	}
}

func formatMTUEvent(d map[string]any) string {
	s := fmt.Sprintf("%v->%v", d["old"], d["new"])
	if d["done"] == true {
		s += " done"
	}
	return s
}

// A path that carries 1400 bytes: three lost probes make a size the
// limit, a binary search follows, one probe at a time, and the lost
// probes are no congestion.
func TestPMTUSearchBelowLostSize(t *testing.T) {
	ccfg, scfg := testConfigs(t, 301)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	var dropped int
	dropAbove(p, 1400, &dropped)
	var sizes []int
	p.client.debugf = func(format string, args ...any) {
		if len(args) >= 5 && format == "%v sent %v pn %d size %d frames %v" {
			if fr, ok := args[4].([]sentFrame); ok && len(fr) == 1 && fr[0].kind == fkPathProbe {
				if p.client.pmtu.inFlight {
					t.Errorf("probe sent while probe %d is outstanding", p.client.pmtu.pn)
				}
				sizes = append(sizes, args[3].(int))
			}
		}
	}
	p.mustRun(p.confirmed, time.Second)
	p.mustRun(p.pmtuSettled, p.now+30*time.Second)
	// 1452 three times, 1326 and 1389 pass, 1420 and 1404 three times
	// each; 1389 and 1404 are within the last step.
	want := []int{1452, 1452, 1452, 1326, 1389, 1420, 1420, 1420, 1404, 1404, 1404}
	if !slices.Equal(sizes, want) {
		t.Errorf("probe sizes %v, want %v", sizes, want)
	}
	st := p.client.Stats()
	if st.PathMTU.MaxDatagramSize != 1389 || st.PathMTU.ProbesLost != 9 || st.PathMTU.ProbesSent != uint64(len(want)) {
		t.Errorf("client path MTU %+v", st.PathMTU)
	}
	if st.Recovery.CongestionSignals != 0 || st.PacketsRetransmitted != 0 {
		t.Errorf("lost probes gave %d congestion signals, %d retransmissions", st.Recovery.CongestionSignals, st.PacketsRetransmitted)
	}
	if dropped != 9 {
		t.Errorf("path dropped %d datagrams, want the 9 probes", dropped)
	}
	// Each lost probe on the idle connection cost at most one PTO.
	if st.Recovery.PTOs > 9 {
		t.Errorf("%d PTOs for 9 lost probes", st.Recovery.PTOs)
	}
	if got := p.server.Stats().PathMTU.MaxDatagramSize; got != DefaultMaxProbeDatagramSize {
		t.Errorf("server at %d, want 1452 on its unlimited direction", got)
	}
}

// The peer's max_udp_payload_size bounds the search (RFC 9000 section
// 18.2), and this end advertises what it can receive, not what it sends.
func TestPMTUPeerLimit(t *testing.T) {
	ccfg, scfg := testConfigs(t, 302)
	scfg.MaxReceiveDatagramSize = 1300
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	p.mustRun(p.pmtuSettled, p.now+time.Second)
	if pp, _ := p.client.PeerParams(); pp.MaxUDPPayloadSize != 1300 {
		t.Errorf("server advertised %d, want 1300", pp.MaxUDPPayloadSize)
	}
	if pp, _ := p.server.PeerParams(); pp.MaxUDPPayloadSize != DefaultMaxReceiveDatagramSize {
		t.Errorf("client advertised %d, want %d", pp.MaxUDPPayloadSize, DefaultMaxReceiveDatagramSize)
	}
	if st := p.client.Stats().PathMTU; st.MaxDatagramSize != 1300 || st.ProbesSent != 1 {
		t.Errorf("client %+v, want 1300 after one probe", st)
	}
}

func TestPMTUDisabled(t *testing.T) {
	ccfg, scfg := testConfigs(t, 303)
	ccfg.DisablePathMTUDiscovery = true
	ccfg.MaxDatagramSize = 1350
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	p.mustRun(p.pmtuSettled, p.now+time.Second)
	if st := p.client.Stats().PathMTU; st.MaxDatagramSize != 1350 || st.ProbesSent != 0 {
		t.Errorf("client %+v, want 1350 without probes", st)
	}
	if st := p.server.Stats().PathMTU; st.MaxDatagramSize != DefaultMaxProbeDatagramSize {
		t.Errorf("server %+v", st)
	}
}

func TestPMTUConfig(t *testing.T) {
	for _, f := range []func(*Config){
		func(c *Config) { c.MaxProbeDatagramSize = 1199 },
		func(c *Config) { c.MaxProbeDatagramSize = 70000 },
		func(c *Config) { c.MaxReceiveDatagramSize = 1000 },
	} {
		cfg, _ := testConfigs(t, 304)
		f(cfg)
		if err := cfg.Check(); !errors.Is(err, ErrConfig) {
			t.Errorf("Check: %v, want ErrConfig", err)
		}
	}
	cfg, _ := testConfigs(t, 304)
	cfg.MaxDatagramSize = 1500
	d, err := cfg.withDefaults()
	if err != nil || d.MaxReceiveDatagramSize != 1500 || d.MaxProbeDatagramSize != DefaultMaxProbeDatagramSize {
		t.Errorf("defaults %d %d, %v", d.MaxReceiveDatagramSize, d.MaxProbeDatagramSize, err)
	}
}

// After the size was raised, the path stops carrying large datagrams: the
// client's data is lost while its small PTO probes arrive, and it falls
// back to the base size and delivers everything; its new search finds
// the path still carries no more than the base size.
func TestPMTUBlackHole(t *testing.T) {
	p, id, data, dropped := blackHoleTransfer(t, 200<<10)
	var got []byte
	p.mustRun(func() bool {
		return p.server.streams.m[id] != nil && readAll(t, p.now, p.server, id, &got)
	}, p.now+60*time.Second)
	if !bytes.Equal(got, data) {
		t.Fatalf("server read %d bytes, want %d", len(got), len(data))
	}
	p.mustRun(p.pmtuSettled, p.now+10*time.Second)
	st := p.client.Stats()
	if !st.PathMTU.BlackHole || st.PathMTU.MaxDatagramSize != DefaultMaxDatagramSize || st.PathMTU.Searching {
		t.Errorf("client %+v, want a black hole and 1200", st.PathMTU)
	}
	if *dropped == 0 {
		t.Error("nothing dropped")
	}
	t.Logf("%d datagrams dropped; PTOs %d, lost %d", *dropped, st.Recovery.PTOs, st.PacketsLost)
}

// TestPMTUBlackHoleSearchesAgain: large datagrams stop arriving for a
// while, as when a full queue has room only for small ones, and the client
// falls back to the base size; when they arrive again, its new search
// brings the size back. The size used to stay at the base for the rest of
// the connection: a tunnel whose inner packets were sized for the path it
// found then dropped every full-size one (its downlink stalled over the
// starlink profile, bench tunnel's tunnel-fixed with 1 MB responses).
func TestPMTUBlackHoleSearchesAgain(t *testing.T) {
	p, id, data, dropped := blackHoleTransfer(t, 200<<10)
	p.mustRun(func() bool { return p.client.Stats().PathMTU.BlackHole }, p.now+10*time.Second)
	p.drop = nil // the large datagrams get through again
	var got []byte
	p.mustRun(func() bool {
		return p.server.streams.m[id] != nil && readAll(t, p.now, p.server, id, &got) && p.pmtuSettled()
	}, p.now+60*time.Second)
	if !bytes.Equal(got, data) {
		t.Fatalf("server read %d bytes, want %d", len(got), len(data))
	}
	st := p.client.Stats().PathMTU
	t.Logf("%d datagrams dropped; client %+v", *dropped, st)
	if !st.BlackHole || st.MaxDatagramSize != DefaultMaxProbeDatagramSize || st.Searching {
		t.Errorf("client %+v, want the black hole seen and %d found again", st, DefaultMaxProbeDatagramSize)
	}
}

// Losses of large and small packets alike (an outage, congestion) are no
// black hole; nor is a run without a small packet between its losses.
func TestBlackHoleDetector(t *testing.T) {
	const base = 1200
	large := func(pn uint64, at time.Duration) pktInfo { return pktInfo{pn, 1452, at, true} }
	small := func(pn uint64, at time.Duration) pktInfo { return pktInfo{pn, 1000, at, true} }
	for _, tc := range []struct {
		name   string
		events []holeEvent
		want   bool
	}{
		{"large lost around acknowledged small ones", []holeEvent{
			lost(large(1, 1)), lost(large(2, 2)), acked(small(3, 3)), lost(large(4, 4)), lost(large(5, 5)), lost(large(6, 6)),
		}, true},
		{"outage: the small packet was sent after every loss", []holeEvent{
			acked(small(7, 7)), lost(large(1, 1)), lost(large(2, 2)), lost(large(3, 3)), lost(large(4, 4)), lost(large(5, 5)), lost(large(6, 6)),
		}, false},
		{"a large packet gets through", []holeEvent{
			lost(large(1, 1)), acked(small(2, 2)), lost(large(3, 3)), lost(large(4, 4)), acked(large(5, 5)), lost(large(6, 6)), lost(large(7, 7)),
		}, false},
		{"too few losses", []holeEvent{
			lost(large(1, 1)), acked(small(2, 2)), lost(large(3, 3)), lost(large(4, 4)), lost(large(5, 5)),
		}, false},
		{"random loss revealed by one ACK that acknowledged later large packets", []holeEvent{
			acked(small(3, 3)), acked(large(9, 9)), lost(large(1, 1)), lost(large(2, 2)), lost(large(4, 4)), lost(large(5, 5)), lost(large(6, 6)), lost(large(7, 7)),
		}, false},
		{"small packets lost too, none acknowledged", []holeEvent{
			lost(large(1, 1)), lost(small(2, 2)), lost(large(3, 3)), lost(large(4, 4)), lost(large(5, 5)), lost(large(6, 6)),
		}, false},
	} {
		var h blackHole
		h.watch(base)
		for _, ev := range tc.events {
			if ev.acked {
				h.onAcked(ev.info())
			} else {
				h.onLost(ev.info())
			}
		}
		if h.detected() != tc.want {
			t.Errorf("%s: detected %v, want %v", tc.name, h.detected(), tc.want)
		}
	}
	var h blackHole
	for pn := range uint64(10) {
		h.onLost(pktInfo{pn, 1452, time.Duration(pn), true}.info())
	}
	if h.detected() {
		t.Error("detected while not watching")
	}
}

// pktInfo is a packet as the black hole detector sees it.
type pktInfo struct {
	pn        uint64
	bytes     int
	at        time.Duration
	eliciting bool
}

func (p pktInfo) info() recovery.PacketInfo {
	return recovery.PacketInfo{Space: spaceApp, Number: p.pn, Bytes: p.bytes, TimeSent: p.at, AckEliciting: p.eliciting, InFlight: true}
}

type holeEvent struct {
	pktInfo
	acked bool
}

func lost(p pktInfo) holeEvent  { return holeEvent{p, false} }
func acked(p pktInfo) holeEvent { return holeEvent{p, true} }

// TestPMTUStateSearch drives the search alone: the largest size first,
// then a binary search after MAX_PROBES losses, until the bounds close.
func TestPMTUStateSearch(t *testing.T) {
	var m pmtuState
	const srtt = 50 * time.Millisecond
	m.start(time.Second, 1200, 1452, false)
	if !m.waiting(time.Second) || m.size != 1452 {
		t.Fatalf("after start: waiting %v, size %d, want a probe of 1452", m.waiting(time.Second), m.size)
	}
	now, pn := time.Second, uint64(10)
	for i := range pmtuMaxProbes {
		m.onProbeSent(pn)
		m.PacketLost(recovery.PacketInfo{Space: spaceApp, Number: pn, PathProbe: true})
		resize, done := m.update(now, srtt)
		if resize != 0 || done {
			t.Fatalf("loss %d: resize %d, done %v", i+1, resize, done)
		}
		if m.waiting(now) || !m.waiting(now+srtt) {
			t.Fatalf("loss %d: the same size is not tried again one round trip later", i+1)
		}
		now, pn = now+srtt, pn+1
	}
	if want := (1200 + 1452) / 2; m.size != want {
		t.Fatalf("after %d losses the next size is %d, want %d", pmtuMaxProbes, m.size, want)
	}
	m.onProbeSent(pn)
	m.PacketAcked(recovery.PacketInfo{Space: spaceApp, Number: pn, PathProbe: true})
	if resize, done := m.update(now, srtt); resize != 1326 || done {
		t.Fatalf("acknowledged probe: resize %d, done %v, want 1326 and more probes", resize, done)
	}
	if st := m.report(1326); st.ProbesSent != 4 || st.ProbesLost != 3 || !st.Searching || st.MaxDatagramSize != 1326 {
		t.Errorf("stats %+v", st)
	}
}

// TestPMTUStateDisabled: a disabled search, or one with no room above the
// starting size, ends at once.
func TestPMTUStateDisabled(t *testing.T) {
	for _, tc := range []struct {
		limit    int
		disabled bool
	}{{1452, true}, {1200, false}, {1100, false}} {
		var m pmtuState
		m.start(0, 1200, tc.limit, tc.disabled)
		if m.phase != pmtuDone || m.waiting(time.Hour) {
			t.Errorf("limit %d disabled %v: still searching", tc.limit, tc.disabled)
		}
	}
}

// blackHoleTransfer starts a pair whose path MTU search settled at the
// largest size, then drops the client's datagrams above the base size
// (counted in dropped) while the client sends size bytes on stream id.
func blackHoleTransfer(t *testing.T, size int) (p *pair, id uint64, data []byte, dropped *int) {
	t.Helper()
	ccfg, scfg := testConfigs(t, 305)
	p = newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	p.mustRun(p.pmtuSettled, p.now+time.Second)
	dropped = new(int)
	dropAbove(p, DefaultMaxDatagramSize, dropped)
	id, _ = p.client.OpenStream(p.now, false)
	data = payload(size, 9)
	written := 0
	p.clientApp = func(now time.Duration, c *Conn) {
		if written < len(data) {
			n, _ := c.StreamWrite(id, data[written:])
			written += n
			if written == len(data) {
				if err := c.CloseWrite(id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return p, id, data, dropped
}
