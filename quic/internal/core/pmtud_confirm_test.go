package core

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// raisedState is a path MTU search that settled at 1452 from 1200, its
// probe acknowledged at now, so that black hole detection watches.
func raisedState(t *testing.T, now time.Duration) *pmtuState {
	t.Helper()
	m := new(pmtuState)
	m.start(now, 1200, 1452, false)
	if resize, done := probeOnce(t, m, now, 1, true); resize != 1452 || !done {
		t.Fatalf("resize %d, done %v", resize, done)
	}
	return m
}

// sendConfirmation sends the confirmation probe that waits at now as pn,
// then its witness, checking both.
func sendConfirmation(t *testing.T, m *pmtuState, now time.Duration, pn uint64) {
	t.Helper()
	kind, size, _ := m.nextProbe()
	if !m.waiting(now) || kind != probeConfirm || size != 1452 {
		t.Fatalf("waiting %v, probe kind %d of %d bytes, want a confirmation of 1452", m.waiting(now), kind, size)
	}
	m.onProbeSent(pn)
	if kind, size, _ := m.nextProbe(); kind != probeWitness || size != 1200 {
		t.Fatalf("after the probe: kind %d of %d bytes, want the witness", kind, size)
	}
	m.check.witnessDue = false // witnessDatagram sent it
	if m.waiting(now + time.Hour) {
		t.Fatal("a probe waits while the confirmation is out")
	}
}

// A suspected black hole keeps the size and sends a probe of it with a
// witness behind; the probe acknowledged dismisses the suspicion, and the
// detector starts over.
func TestPMTUStateConfirmDismissed(t *testing.T) {
	const srtt = 50 * time.Millisecond
	now := time.Second
	m := raisedState(t, now)
	blackHoleAt(m, now)
	if resize, done := m.update(now, srtt); resize != 0 || done {
		t.Fatalf("suspicion: resize %d, done %v, want the size kept", resize, done)
	}
	sendConfirmation(t, m, now, 200)
	m.PacketAcked(probeInfo(200, now))
	if resize, _ := m.update(now+srtt, srtt); resize != 0 {
		t.Fatalf("probe acknowledged: resize %d", resize)
	}
	st := m.report(1452)
	if st.BlackHole || st.BlackHolesDismissed != 1 || st.ProbesSent != 2 || st.ProbesLost != 0 || st.Searching {
		t.Errorf("stats %+v, want one suspicion dismissed", st)
	}
	if m.check.active() || m.hole.run != 0 || !m.hole.watching() {
		t.Errorf("after the dismissal: check %+v, detector %+v, want a fresh watch", m.check, m.hole)
	}
	// A new run is a new suspicion.
	blackHoleAt(m, 2*time.Second)
	m.update(2*time.Second, srtt)
	if kind, _, _ := m.nextProbe(); kind != probeConfirm {
		t.Errorf("second run: probe kind %d, want a confirmation", kind)
	}
}

// A large packet sent after the run began and acknowledged before the
// probe goes ends the suspicion without a probe; one sent before the run
// does not.
func TestPMTUStateConfirmLargeAcked(t *testing.T) {
	const srtt = 50 * time.Millisecond
	now := time.Second
	m := raisedState(t, now)
	blackHoleAt(m, now) // the run starts with a packet sent at now+1ms
	m.update(now, srtt)
	m.PacketAcked(pktInfo{90, 1452, now, true}.info())
	if m.update(now, srtt); !m.check.active() {
		t.Fatal("a large packet sent before the run dismissed the suspicion")
	}
	m.PacketAcked(pktInfo{110, 1452, now + 10*time.Millisecond, true}.info())
	if resize, _ := m.update(now+srtt, srtt); resize != 0 || m.check.active() || m.waiting(now+srtt) {
		t.Fatalf("resize %d, check %+v, want the suspicion dismissed and no probe", resize, m.check)
	}
	if st := m.report(1452); st.BlackHolesDismissed != 1 || st.ProbesSent != 1 {
		t.Errorf("stats %+v", st)
	}
}

// The probe lost confirms the black hole: the size falls back, once, the
// detector stops, and the new search probes the size that was in use.
func TestPMTUStateConfirmLost(t *testing.T) {
	const srtt = 50 * time.Millisecond
	now := time.Second
	m := raisedState(t, now)
	blackHoleAt(m, now)
	m.update(now, srtt)
	sendConfirmation(t, m, now, 200)
	// More large packets lost meanwhile change nothing.
	m.PacketLost(pktInfo{201, 1452, now + 20*time.Millisecond, true}.info())
	if resize, _ := m.update(now+srtt, srtt); resize != 0 {
		t.Fatalf("resize %d before the probe's fate is known", resize)
	}
	now += 2 * srtt
	m.PacketLost(probeInfo(200, now-2*srtt))
	if resize, done := m.update(now, srtt); resize != 1200 || done {
		t.Fatalf("probe lost: resize %d, done %v, want the base 1200", resize, done)
	}
	st := m.report(1200)
	if !st.BlackHole || st.BlackHolesDismissed != 0 || st.ProbesSent != 2 || st.ProbesLost != 1 || !st.Searching {
		t.Errorf("stats %+v, want the black hole confirmed", st)
	}
	// Losses go on in the hole: no new suspicion while the size is the
	// base.
	blackHoleAt(m, now)
	if resize, _ := m.update(now, srtt); resize != 0 || m.check.active() {
		t.Fatalf("after the fallback: resize %d, check %+v", resize, m.check)
	}
	if kind, size, at := m.nextProbe(); kind != probeSearch || size != 1452 || at != now+srtt {
		t.Errorf("next probe kind %d of %d at %v, want the search's 1452 at %v", kind, size, at, now+srtt)
	}
}

// probeInfo is path probe pn of 1452 bytes sent at, as loss recovery
// reports it.
func probeInfo(pn uint64, at time.Duration) recovery.PacketInfo {
	p := pktInfo{pn, 1452, at, true}.info()
	p.PathProbe = true
	return p
}

// stalledReader is a receiver's socket buffer: a tail-drop queue of
// capacity bytes, read at rate bytes per second except while the reader
// stalls, from stallFrom to stallTo (a busy machine holds its process).
// A datagram that does not fit is dropped, so that near the top small
// datagrams still get in where large ones do not.
type stalledReader struct {
	capacity           int
	rate               float64
	stallFrom, stallTo time.Duration
	// queued holds the time each datagram in the buffer is read and its
	// size; last is when the newest one is read.
	queued []readAt
	last   time.Duration
	// delay is how long the datagram offered last waits in the buffer.
	delay time.Duration
	// droppedLarge counts datagrams above 1200 bytes dropped, and
	// smallPast the smaller ones that got in while a large one would
	// not have.
	droppedLarge, smallPast int
}

type readAt struct {
	at   time.Duration
	size int
}

// offer reports whether a datagram of n bytes arriving at now gets in.
func (q *stalledReader) offer(now time.Duration, n int) bool {
	used := 0
	kept := q.queued[:0]
	for _, r := range q.queued {
		if r.at > now {
			kept = append(kept, r)
			used += r.size
		}
	}
	q.queued = kept
	if used+n > q.capacity {
		if n > DefaultMaxDatagramSize {
			q.droppedLarge++
		}
		return false
	}
	if used+DefaultMaxProbeDatagramSize > q.capacity {
		q.smallPast++
	}
	start := max(now, q.last)
	if start >= q.stallFrom && start < q.stallTo {
		start = q.stallTo
	}
	q.last = start + time.Duration(float64(n)/q.rate*float64(time.Second))
	q.queued = append(q.queued, readAt{q.last, n})
	q.delay = q.last - now
	return true
}

// attach puts the buffer in front of the server of p.
func (q *stalledReader) attach(p *pair) {
	p.drop = func(toServer bool, _ int, d []byte) bool {
		return toServer && !q.offer(p.now, len(d))
	}
	p.extraDelay = func(toServer bool, _ int, _ []byte) time.Duration {
		if toServer {
			return q.delay
		}
		return 0
	}
}

// TestPMTUBlackHoleStalledReader: a tunnel's client sends full-size and
// small datagrams in turn (inner data and inner ACKs) to a server whose
// socket buffer fills while its reader stalls. The buffer drops the large
// datagrams and takes the small ones, the trace of a black hole, and the
// detector suspects one; the confirmation probe, sent once the reader is
// back, gets through and the size stays. It used to fall back to 1200,
// and a tunnel then answered every full-size inner packet with
// Fragmentation Needed.
func TestPMTUBlackHoleStalledReader(t *testing.T) {
	for _, stall := range []time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 200 * time.Millisecond} {
		t.Run(stall.String(), func(t *testing.T) {
			ccfg, scfg := testConfigs(t, 306)
			ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
			var qlog bytes.Buffer
			ccfg.Qlog = &qlog
			p := newPair(t, ccfg, scfg, 10*time.Millisecond)
			p.mustRun(p.confirmed, time.Second)
			p.mustRun(p.pmtuSettled, p.now+time.Second)
			from := p.now + 200*time.Millisecond
			// 32 Mbit/s read from a 208 kB buffer, Linux's default.
			q := &stalledReader{capacity: 208 << 10, rate: 4e6, stallFrom: from, stallTo: from + stall}
			q.attach(p)
			left := 8000
			body := make([]byte, DefaultMaxProbeDatagramSize)
			p.clientApp = func(now time.Duration, c *Conn) {
				for ; left > 0 && c.DatagramSendRoom() > 0; left-- {
					n := 40
					if left%2 == 0 {
						n = c.MaxDatagramPayloadSize()
					}
					if err := c.SendDatagram(now, body[:n]); err != nil {
						t.Fatal(err)
					}
				}
			}
			p.serverApp = func(time.Duration, *Conn) {
				for {
					if _, ok := p.server.ReceiveDatagram(); !ok {
						return
					}
				}
			}
			p.mustRun(func() bool { return left == 0 && p.client.sender.BytesInFlight() == 0 }, p.now+30*time.Second)
			st := p.client.Stats().PathMTU
			t.Logf("client %+v; buffer dropped %d large datagrams, took %d small ones it had no room for a large one",
				st, q.droppedLarge, q.smallPast)
			if q.droppedLarge < blackHoleLosses || q.smallPast == 0 {
				t.Fatalf("the buffer dropped %d large datagrams and took %d small ones on top: no black hole pattern", q.droppedLarge, q.smallPast)
			}
			if st.BlackHole || st.BlackHolesDismissed != 1 || st.MaxDatagramSize != DefaultMaxProbeDatagramSize || st.ProbesLost != 0 {
				t.Errorf("client %+v, want one suspicion dismissed and the size kept at %d", st, DefaultMaxProbeDatagramSize)
			}
			if want := []string{"1200->1452", "1452->1452 done"}; !slices.Equal(mtuUpdates(t, &qlog), want) {
				t.Errorf("qlog mtu_updated %v, want %v", mtuUpdates(t, &qlog), want)
			}
		})
	}
}

// mtuUpdates lists the recovery:mtu_updated events of a qlog.
func mtuUpdates(t *testing.T, qlog *bytes.Buffer) []string {
	t.Helper()
	_, evs := parseQlog(t, qlog.Bytes())
	var updates []string
	for _, ev := range evs {
		if ev.Name == "recovery:mtu_updated" {
			updates = append(updates, formatMTUEvent(ev.Data))
		}
	}
	return updates
}

// holeRun is a client's bulk transfer through which the path stops
// carrying large datagrams; it records when the black hole was suspected
// and when the size fell back, from the moment the hole opened, and how
// many suspicions there were.
type holeRun struct {
	p                   *pair
	id                  uint64
	data, got           []byte
	opened              time.Duration
	suspected, fellBack time.Duration
	suspicions          int
	active              bool
}

// startHoleRun sends size bytes from the client over a path of the given
// one-way delay; once the server has read 300 kB, datagrams to it above
// mtu bytes are dropped.
func startHoleRun(t *testing.T, delay time.Duration, size, mtu int) *holeRun {
	t.Helper()
	ccfg, scfg := testConfigs(t, 307)
	r := &holeRun{p: newPair(t, ccfg, scfg, delay), data: payload(size, 9)}
	p := r.p
	p.mustRun(p.confirmed, 10*time.Second)
	p.mustRun(p.pmtuSettled, p.now+10*time.Second)
	r.id, _ = p.client.OpenStream(p.now, false)
	written := 0
	p.clientApp = func(now time.Duration, c *Conn) {
		if written == len(r.data) {
			return
		}
		n, _ := c.StreamWrite(r.id, r.data[written:])
		if written += n; written == len(r.data) {
			if err := c.CloseWrite(r.id); err != nil {
				t.Fatal(err)
			}
		}
	}
	p.serverApp = func(now time.Duration, c *Conn) {
		if c.streams.m[r.id] != nil {
			readAll(t, now, c, r.id, &r.got)
		}
	}
	p.mustRun(func() bool { return len(r.got) >= 300<<10 }, p.now+30*time.Second)
	r.opened = p.now
	dropAbove(p, mtu, new(int))
	return r
}

// watch notes suspicions and the fallback; it is a run condition that
// never holds by itself.
func (r *holeRun) watch() {
	c := r.p.client
	if active := c.pmtu.check.active(); active && !r.active {
		r.suspicions++
		if r.suspected == 0 {
			r.suspected = r.p.now - r.opened
		}
	} else if !active && r.active && r.fellBack == 0 && c.Stats().PathMTU.BlackHole {
		r.fellBack = r.p.now - r.opened
	}
	r.active = c.pmtu.check.active()
}

// finish runs until the server has read everything and the search ended.
func (r *holeRun) finish(t *testing.T) {
	t.Helper()
	r.p.mustRun(func() bool {
		r.watch()
		return len(r.got) == len(r.data) && r.p.pmtuSettled()
	}, r.p.now+120*time.Second)
	if !bytes.Equal(r.got, r.data) {
		t.Fatalf("server read %d bytes, not what was sent", len(r.got))
	}
}

// TestPMTUBlackHoleConfirmTime: a path that stops carrying large
// datagrams in the middle of a transfer, with round trips of 30 ms and
// 600 ms (GEO). The black hole is suspected when it used to be declared;
// the confirmation adds 9/8 of a round trip, the time the witness's
// acknowledgement takes to show the probe lost (RFC 9002 section 6.1.2),
// then the size falls back, once, and the transfer completes.
func TestPMTUBlackHoleConfirmTime(t *testing.T) {
	for _, delay := range []time.Duration{15 * time.Millisecond, 300 * time.Millisecond} {
		t.Run(delay.String(), func(t *testing.T) {
			r := startHoleRun(t, delay, 2<<20, DefaultMaxDatagramSize)
			r.finish(t)
			rtt := 2 * delay
			span := r.fellBack - r.suspected
			st := r.p.client.Stats()
			t.Logf("RTT %v: suspected after %v, fell back after %v (confirmation %v); %+v", rtt, r.suspected, r.fellBack, span, st.PathMTU)
			// Detection takes a few round trips and a probe timeout or
			// two: 7.5 round trips at 30 ms, 4.2 at 600 ms.
			if r.suspected <= 0 || r.suspected > 10*rtt {
				t.Errorf("suspected after %v, more than 10 round trips", r.suspected)
			}
			if confirm := rtt * 9 / 8; span < confirm || span > confirm+time.Millisecond {
				t.Errorf("confirmation took %v, want 9/8 of the round trip, %v", span, confirm)
			}
			if r.suspicions != 1 || !st.PathMTU.BlackHole || st.PathMTU.BlackHolesDismissed != 0 || st.PathMTU.MaxDatagramSize != DefaultMaxDatagramSize {
				t.Errorf("%d suspicions, client %+v, want one black hole confirmed and the base size", r.suspicions, st.PathMTU)
			}
		})
	}
}

// TestPMTUBlackHoleSmallerPath: the path's MTU drops from 1452 to 1300
// bytes in the middle of a transfer. The size falls back once and the new
// search settles below 1300, where the detector watches again and finds
// nothing: no going back and forth between suspicion and fallback.
func TestPMTUBlackHoleSmallerPath(t *testing.T) {
	r := startHoleRun(t, 15*time.Millisecond, 4<<20, 1300)
	r.finish(t)
	st := r.p.client.Stats().PathMTU
	t.Logf("suspected after %v, fell back after %v; %+v", r.suspected, r.fellBack, st)
	if r.suspicions != 1 || !st.BlackHole || st.BlackHolesDismissed != 0 {
		t.Errorf("%d suspicions, client %+v, want one black hole confirmed", r.suspicions, st)
	}
	if st.MaxDatagramSize <= DefaultMaxDatagramSize || st.MaxDatagramSize > 1300 || st.Searching {
		t.Errorf("client settled at %d, want above the base and at most 1300", st.MaxDatagramSize)
	}
	if !r.p.client.pmtu.hole.watching() {
		t.Error("the detector does not watch the size found again")
	}
}
