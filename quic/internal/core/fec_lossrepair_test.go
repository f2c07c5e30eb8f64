package core

import (
	"bytes"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// sentKind is what a server datagram of a lossRepairPair carried, told
// from the server's FEC counters after it was built.
type sentKind int

const (
	sentOther sentKind = iota
	sentSource
	sentOwedRepair
	sentLossRepair
	sentProbeRepair
)

// lossRepairPair is a pair with FEC and DATAGRAM frames over a 25 ms path,
// past its handshake, whose server datagrams a rule may drop by kind and
// by the index of the source among those sent after the handshake.
type lossRepairPair struct {
	*pair
	sources int
	last    FECStats
	// dropped counts the server datagrams dropped, by kind.
	dropped map[sentKind]int
	got     [][]byte
}

func newLossRepairPair(t *testing.T, drop func(kind sentKind, source int) bool) *lossRepairPair {
	t.Helper()
	ccfg, scfg := fecConfigs(t, 91, recovery.FECAuto)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	p := &lossRepairPair{pair: newPair(t, ccfg, scfg, 25*time.Millisecond), dropped: map[sentKind]int{}}
	p.mustRun(p.confirmed, 5*time.Second)
	p.mustRun(func() bool { return p.server.Stats().BytesInFlight == 0 }, 10*time.Second)
	p.last = p.server.Stats().FEC
	p.drop = func(toServer bool, _ int, _ []byte) bool {
		if toServer {
			return false
		}
		kind, source := p.classify()
		if drop(kind, source) {
			p.dropped[kind]++
			return true
		}
		return false
	}
	p.clientApp = func(_ time.Duration, c *Conn) {
		for {
			b, ok := c.ReceiveDatagram()
			if !ok {
				return
			}
			p.got = append(p.got, b)
		}
	}
	return p
}

// classify tells what the server's last datagram carried, and the index
// of its source if it was one.
func (p *lossRepairPair) classify() (sentKind, int) {
	now := p.server.Stats().FEC
	prev := p.last
	p.last = now
	switch {
	case now.SourcesSent > prev.SourcesSent:
		p.sources++
		return sentSource, p.sources - 1
	case now.RepairProbesSent > prev.RepairProbesSent:
		return sentProbeRepair, -1
	case now.LossRepairsSent > prev.LossRepairsSent:
		return sentLossRepair, -1
	case now.RepairsSent > prev.RepairsSent:
		return sentOwedRepair, -1
	}
	return sentOther, -1
}

// sendAndSettle has the server send n datagrams of 1000 bytes at once,
// numbered, and runs until nothing is in flight or due.
func (p *lossRepairPair) sendAndSettle(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		if err := p.server.SendDatagram(p.now, bytes.Repeat([]byte{byte(i)}, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	p.mustRun(func() bool {
		s := p.server
		return s.Stats().BytesInFlight == 0 && !s.dgram.hasQueued() && !s.fec.lossRepairDue() && len(p.flights) == 0
	}, 20*time.Second)
}

// checkAllDelivered fails unless the client received each of the n
// datagrams once.
func (p *lossRepairPair) checkAllDelivered(t *testing.T, n int) {
	t.Helper()
	seen := map[byte]int{}
	for _, b := range p.got {
		seen[b[0]]++
	}
	for i := range n {
		if seen[byte(i)] != 1 {
			t.Errorf("datagram %d delivered %d times, want once", i, seen[byte(i)])
		}
	}
}

// TestLossRepairRebuildsLostDatagram: a packet carrying a datagram is
// lost while the overhead allowance is spent, so the controller owes no
// repair, neither for the tail nor in reaction to the gap. Once loss
// detection declares it lost, one repair goes over it, on the allowance's
// debt, and the client rebuilds and delivers the datagram.
func TestLossRepairRebuildsLostDatagram(t *testing.T) {
	p := newLossRepairPair(t, func(_ sentKind, source int) bool { return source == 2 })
	b := &p.server.fec.send.budget
	b.credit = -3 * b.full // three full repairs in debt
	before := p.server.Stats().FEC
	p.sendAndSettle(t, 5)
	p.checkAllDelivered(t, 5)
	s, c := p.server.Stats().FEC, p.client.Stats().FEC
	if s.LossRepairsSent != 1 || s.RepairProbesSent != 0 || c.SymbolsRecovered != 1 {
		t.Errorf("%d repairs on loss, %d probe repairs, %d rebuilt: want 1, 0, 1", s.LossRepairsSent, s.RepairProbesSent, c.SymbolsRecovered)
	}
	if owed := s.RepairsSent - before.RepairsSent - s.LossRepairsSent; owed != 0 {
		t.Errorf("%d owed repairs sent, want none", owed)
	}
}

// TestLossRepairNoneForRebuiltSource: the tail repair rebuilds the lost
// datagram, so no repair on loss follows, whether the report comes
// before or after loss detection declared it lost.
func TestLossRepairNoneForRebuiltSource(t *testing.T) {
	p := newLossRepairPair(t, func(_ sentKind, source int) bool { return source == 2 })
	p.sendAndSettle(t, 5)
	p.checkAllDelivered(t, 5)
	s, c := p.server.Stats().FEC, p.client.Stats().FEC
	if s.LossRepairsSent != 0 || s.RepairProbesSent != 0 || c.SymbolsRecovered != 1 {
		t.Errorf("%d repairs on loss, %d probe repairs, %d rebuilt: want 0, 0, 1", s.LossRepairsSent, s.RepairProbesSent, c.SymbolsRecovered)
	}
}

// TestLossRepairProbe: a burst of three datagrams and its tail repair are
// all lost, so no ACK comes. The probe timeout takes the burst and the
// repair for lost (onProbeTimeout): its probes are repairs over the burst
// rather than PINGs, counted as repairs on loss, and one more follows at
// once, without waiting for the probes' ACK to declare the burst lost:
// three repairs for three unknowns rebuild it.
func TestLossRepairProbe(t *testing.T) {
	p := newLossRepairPair(t, func(kind sentKind, source int) bool {
		return (source >= 0 && source < 3) || kind == sentOwedRepair
	})
	probes := p.server.Stats().ProbesSent
	p.sendAndSettle(t, 3)
	p.checkAllDelivered(t, 3)
	st := p.server.Stats()
	s, c := st.FEC, p.client.Stats().FEC
	if n := st.ProbesSent - probes; n != 2 || s.RepairProbesSent != 0 {
		t.Errorf("%d probes, %d probe repairs: want 2 probes, which are repairs on loss", n, s.RepairProbesSent)
	}
	if s.LossRepairsSent != 3 || c.SymbolsRecovered != 3 {
		t.Errorf("%d repairs on loss, %d rebuilt: want 3 and 3", s.LossRepairsSent, c.SymbolsRecovered)
	}
}

// TestLossRepairsNeeded: the sender's count of what sources known lost
// need, with explicit results: one per lost source less the repairs in
// flight or received over them; none once the peer reports it rebuilt; a
// lost source out of the window's reach is given up.
func TestLossRepairsNeeded(t *testing.T) {
	f := testFECSender(t)
	f.cfg.NoTailProtection = true
	for pn := range uint64(4) {
		if err := f.onSourceSent(pn, bytes.Repeat([]byte{byte(pn)}, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	f.loss.onSourceLost(1)
	f.onResult(&recovery.Result{
		Acked: []recovery.PacketInfo{{Space: spaceApp, Number: 0}, {Space: spaceApp, Number: 2}, {Space: spaceApp, Number: 3}},
		Lost:  []recovery.PacketInfo{{Space: spaceApp, Number: 1}},
	})
	if n := f.lossRepairsNeeded(); n != 1 {
		t.Fatalf("needed %d repairs for one lost source, want 1", n)
	}
	data, id, kind, ok := f.pickRepair(false)
	if !ok || kind != repairOnLoss || id.FirstESI != 1 || id.NSS != 3 || len(data) == 0 {
		t.Fatalf("picked %v kind %d ok %v, want a repair on loss over sources 1-3", id, kind, ok)
	}
	f.onPickedRepairSent(10, id, len(data), kind)
	if n := f.lossRepairsNeeded(); n != 0 {
		t.Errorf("needed %d with the repair in flight, want 0", n)
	}
	// The repair arrives without rebuilding (its ACK, no report): the
	// peer holds its equation.
	f.onResult(&recovery.Result{Acked: []recovery.PacketInfo{{Space: spaceApp, Number: 10}}})
	if n := f.lossRepairsNeeded(); n != 0 {
		t.Errorf("needed %d with the repair received, want 0", n)
	}
	// It was lost instead: one more is needed.
	f.loss.flights = f.loss.flights[:0]
	f.onPickedRepairSent(11, id, len(data), kind)
	f.onResult(&recovery.Result{Lost: []recovery.PacketInfo{{Space: spaceApp, Number: 11}}})
	if n := f.lossRepairsNeeded(); n != 1 {
		t.Errorf("needed %d after the repair was lost, want 1", n)
	}
	// The peer reports the source rebuilt: nothing more.
	f.onResult(&recovery.Result{Recovered: []recovery.PacketInfo{{Space: spaceApp, Number: 1}}})
	if n := f.lossRepairsNeeded(); n != 0 || len(f.loss.waiting) != 0 {
		t.Errorf("needed %d, %d waiting after the rebuild, want none", n, len(f.loss.waiting))
	}
	if _, _, kind, ok := f.pickRepair(false); ok && kind != repairOwed {
		t.Errorf("picked a repair of kind %d after the rebuild", kind)
	}

	// A lost source that the window's reach passes, as new sources go
	// out, is given up.
	g := testFECSender(t)
	g.cfg.NoTailProtection = true
	send := func(from, to uint64) {
		for pn := from; pn < to; pn++ {
			if err := g.onSourceSent(pn, []byte{1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(0, 2)
	g.loss.onSourceLost(0)
	g.onResult(&recovery.Result{Lost: []recovery.PacketInfo{{Space: spaceApp, Number: 0}}})
	if n := g.lossRepairsNeeded(); n != 1 {
		t.Fatalf("needed %d for a lost source within reach, want 1", n)
	}
	send(2, g.loss.reach)
	if n := g.lossRepairsNeeded(); n != 1 {
		t.Errorf("needed %d with the lost source at the edge of the reach, want 1", n)
	}
	send(g.loss.reach, g.loss.reach+1)
	if n := g.lossRepairsNeeded(); n != 0 || g.stats.LostSourcesGivenUp != 1 {
		t.Errorf("source out of reach: needed %d, %d given up; want 0 and 1", n, g.stats.LostSourcesGivenUp)
	}
}

// TestLossRepairsWithinAllowance: sources known lost get repairs only as
// far as the overhead allowance and its debt go; more lost than that, the
// oldest are given up, as repairs fewer than the unknowns rebuild nothing.
func TestLossRepairsWithinAllowance(t *testing.T) {
	f := testFECSender(t)
	f.cfg.NoTailProtection = true
	const n = 80
	res := &recovery.Result{}
	for pn := range uint64(n) {
		if err := f.onSourceSent(pn, bytes.Repeat([]byte{1}, 1000)); err != nil {
			t.Fatal(err)
		}
		f.loss.onSourceLost(pn)
		res.Lost = append(res.Lost, recovery.PacketInfo{Space: spaceApp, Number: pn})
	}
	const credit = 2 // full repairs
	f.budget.credit = credit * f.budget.full
	f.onResult(res)
	need := f.lossRepairsNeeded()
	if max := credit + lossRepairMaxDebt; need != max || len(f.loss.waiting) != max {
		t.Errorf("needed %d for %d waiting with %d full repairs of credit, want %d for the newest %d", need, len(f.loss.waiting), credit, max, max)
	}
	if f.stats.LostSourcesGivenUp != uint64(n-need) {
		t.Errorf("%d given up, want %d", f.stats.LostSourcesGivenUp, n-need)
	}
}

// TestLossRepairStalledWaits: a repair on loss picked but not sent (it
// did not fit, or the sender was overloaded) is not due again until the
// next result, so that the connection's timer does not fire again and
// again at one instant.
func TestLossRepairStalledWaits(t *testing.T) {
	f := testFECSender(t)
	f.cfg.NoTailProtection = true
	for pn := range uint64(3) {
		if err := f.onSourceSent(pn, bytes.Repeat([]byte{1}, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	f.loss.onSourceLost(0)
	f.onResult(&recovery.Result{Lost: []recovery.PacketInfo{{Space: spaceApp, Number: 0}}})
	fs := &fecState{send: f}
	if !fs.lossRepairDue() {
		t.Fatal("no repair due for a lost source")
	}
	if _, _, kind, ok := f.pickRepair(false); !ok || kind != repairOnLoss {
		t.Fatalf("picked kind %d ok %v, want a repair on loss", kind, ok)
	}
	f.onPickedRepairDropped(repairOnLoss, false)
	if fs.lossRepairDue() {
		t.Error("a repair is due again right after one could not be sent")
	}
	f.onResult(&recovery.Result{Acked: []recovery.PacketInfo{{Space: spaceApp, Number: 1}}})
	if !fs.lossRepairDue() {
		t.Error("no repair due after the next result")
	}
}
