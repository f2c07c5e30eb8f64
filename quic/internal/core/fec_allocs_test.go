package core

import (
	"runtime"
	"testing"
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// fecLockstepDrop is the index, within a step's data datagrams, of the one
// the FEC lockstep loses: about one packet in 12, which the fixed 16:2
// code of newFECLockstep rebuilds from a repair (RFC 9265 section 2:
// repairs stand in for lost packets).
const fecLockstepDrop = 11

// fecAllocSlack is the most allocations the 300 measured steps may make in
// all: 0 or 1 are seen (the packet writer appends frames without moving
// them to the heap), and the slack leaves room for a rare growth of a queue
// outside FEC. One allocation per rebuilt source (about 156) or per
// packet (over 3,000) exceeds it many times.
const fecAllocSlack = 10

// newFECLockstep is a lockstep with FEC on at both ends, under the fixed
// controller so that repairs go out at a known rate whatever the loss.
func newFECLockstep(t testing.TB, upload bool) *lockstep {
	ccfg, scfg := testConfigs(t, 3)
	for _, cfg := range []*Config{ccfg, scfg} {
		cfg.FEC = &FECConfig{Controller: FECFixed, Fixed: fec.FixedConfig{Sources: 16, Repairs: 2}}
		cfg.Recovery.FECPolicy = recovery.FECHide
	}
	return lockstepFrom(t, upload, ccfg, scfg)
}

// lockstepFrom builds a lockstep over a connected pair of the given
// configurations, with 1452-byte datagrams.
func lockstepFrom(t testing.TB, upload bool, ccfg, scfg *Config) *lockstep {
	ccfg.MaxDatagramSize, scfg.MaxDatagramSize = 1452, 1452
	p := newPair(t, ccfg, scfg, time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	l := &lockstep{t: t, now: p.now, snd: p.client, rcv: p.server, chunk: payload(48<<10, 3), out: make([]byte, 64<<10)}
	if !upload {
		l.snd, l.rcv = p.server, p.client
	}
	id, err := l.snd.OpenStream(l.now, false)
	if err != nil {
		t.Fatal(err)
	}
	l.id = id
	for i := range l.data.d {
		l.data.d[i].Data = make([]byte, 0, 2048)
		l.acks.d[i].Data = make([]byte, 0, 2048)
	}
	return l
}

// lossyStep is a lockstep step in which the sender's datagram at index
// fecLockstepDrop never arrives.
func (l *lockstep) lossyStep() {
	l.sendHalf()
	l.dropOne()
	l.recvHalf()
}

// dropOne loses the data datagram at index fecLockstepDrop, if the step
// sent that many.
func (l *lockstep) dropOne() {
	d := &l.data
	if d.n <= fecLockstepDrop {
		return
	}
	lost := d.d[fecLockstepDrop]
	copy(d.d[fecLockstepDrop:d.n], d.d[fecLockstepDrop+1:d.n])
	d.n--
	// Its buffer goes to the end, for reuse.
	d.d[d.n] = Datagram{Data: lost.Data[:0]}
}

// TestFECSteadyStateAllocs checks that FEC allocates nothing per packet
// once a transfer runs: not the encoder taking source symbols and building
// repairs, not the source log and controller, not the decoder keeping its
// window, solving for a lost source and handing back the rebuilt packet,
// nor the FEC_RECOVERED reports. The bound is 0 per packet and per
// rebuilt source, checked as at most fecAllocSlack over the 300 measured
// steps (a step moves about 12 packets, one of which is lost, and rebuilt
// unless it was a repair), since testing.AllocsPerRun's average truncates:
// every buffer is a window-sized ring or a slice kept between packets, and
// once the windows are full nothing grows.
func TestFECSteadyStateAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts need the warm-up")
	}
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop blocks")
	}
	for _, tc := range []struct {
		name   string
		upload bool
	}{{"client sends", true}, {"server sends", false}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newFECLockstep(t, tc.upload)
			// Warm up: windows, rings and pools reach their working
			// size, the decoder's window fills.
			for range 2000 {
				l.lossyStep()
			}
			before := fecCounters(l)
			moved := l.moved
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			gc0 := ms.NumGC
			var sendAllocs, recvAllocs uint64
			const runs = 300
			avg := testing.AllocsPerRun(runs, func() {
				runtime.ReadMemStats(&ms)
				m0 := ms.Mallocs
				l.sendHalf()
				runtime.ReadMemStats(&ms)
				m1 := ms.Mallocs
				l.dropOne()
				l.recvHalf()
				runtime.ReadMemStats(&ms)
				sendAllocs += m1 - m0
				recvAllocs += ms.Mallocs - m1
			})
			after := fecCounters(l)
			// With a loss in every step the congestion window stays
			// near a dozen packets: a step moves about 15 KB.
			if moved := l.moved - moved; moved < runs*(8<<10) {
				t.Fatalf("measured steps moved %d bytes, want %d", moved, runs*(8<<10))
			}
			sources, repairs, recovered := after.SourcesSent-before.SourcesSent, after.RepairsSent-before.RepairsSent, after.recovered-before.recovered
			t.Logf("over %d steps: %d sources, %d repairs sent, %d sources rebuilt; %d allocations (sending side %d), %d collections", runs+1, sources, repairs, recovered, sendAllocs+recvAllocs, sendAllocs, ms.NumGC-gc0)
			// The measured steps must exercise the whole path: repairs
			// sent, and a lost source rebuilt in at least one step in
			// three (the lost datagram is at times a repair, or a
			// source no repair covers before it is declared lost).
			if sources < runs*8 || repairs < sources/16 || recovered < runs/3 {
				t.Fatalf("FEC idle during the measured steps: %d sources, %d repairs, %d rebuilt", sources, repairs, recovered)
			}
			// testing.AllocsPerRun truncates its average: one
			// allocation per rebuilt source, every other step, would
			// read 0. The bound is on the total instead.
			if total := sendAllocs + recvAllocs; avg != 0 || total > fecAllocSlack {
				t.Errorf("%d allocations over %d steps, %.2f per step (sending side %d, receiving side %d)", total, runs+1, avg, sendAllocs, recvAllocs)
			}
		})
	}
}

// fecLockstepCounters are the FEC counters of both ends of a lockstep.
type fecLockstepCounters struct {
	FECStats
	recovered uint64 // the receiver's rebuilt sources
}

func fecCounters(l *lockstep) fecLockstepCounters {
	return fecLockstepCounters{FECStats: l.snd.Stats().FEC, recovered: l.rcv.Stats().FEC.SymbolsRecovered}
}
