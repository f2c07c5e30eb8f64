package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
)

// sentKinds is what each 1-RTT packet a connection sent carried: the
// time it went, and whether it was a FEC source or a repair.
type sentKinds struct {
	at              []time.Duration
	source, repair  []bool
	lastSource      time.Duration
	repairAfterLast time.Duration
}

// record is a Conn.debugf that notes the 1-RTT packets sent.
func (k *sentKinds) record(format string, args ...any) {
	if format != "%v sent %v pn %d size %d frames %v" || args[1] != spaceApp {
		return
	}
	now, frames := args[0].(time.Duration), args[4].([]sentFrame)
	src, rep := hasFECSourceData(frames), carriesRepair(frames)
	k.at, k.source, k.repair = append(k.at, now), append(k.source, src), append(k.repair, rep)
	switch {
	case src:
		k.lastSource, k.repairAfterLast = now, 0
	case rep && k.repairAfterLast == 0:
		k.repairAfterLast = now
	}
}

// TestFECOwedRepairWakesPacer: with the fixed rate (10 sources : 1
// repair) and no tail protection, a burst of 30 datagrams that the pacer
// spreads out owes a repair after its last source. The repair goes as
// soon as the pacer lets a packet go, a pacing interval after that
// source. It used to wait for the next ACK (20 ms later here, a round
// trip after the burst's first packets), since no timer woke the
// connection for it: had the burst's last packets been lost, for the
// probe timeout, the very losses it was owed to repair.
func TestFECOwedRepairWakesPacer(t *testing.T) {
	ccfg, scfg := testConfigs(t, 5)
	for _, c := range []*Config{ccfg, scfg} {
		c.FEC = &FECConfig{Controller: FECFixed, Fixed: fec.FixedConfig{Sources: 10, Repairs: 1}, NoTailProtection: true}
		c.Recovery.FECPolicy = recovery.FECAuto
		c.EnableDatagrams = true
	}
	prof := profile(t, "starlink")
	prof.Up.Loss, prof.Down.Loss, prof.Up.Outages, prof.Down.Outages = "", "", nil, nil
	sp := newSimPair(t, prof, 1, ccfg, scfg, nil)
	const n = 30
	sent := 0
	var kinds sentKinds
	sp.server.app = func(now time.Duration, c *Conn) {
		if !c.HandshakeConfirmed() || sent == n {
			return
		}
		c.debugf = kinds.record
		for ; sent < n; sent++ {
			if err := c.SendDatagram(now, numbered(sent, 1000)); err != nil {
				t.Fatal(err)
			}
		}
	}
	sp.run(t, func() bool {
		s := sp.server.conn
		return sent == n && s.Stats().FEC.RepairsSent == n/10 && s.Stats().BytesInFlight == 0
	}, 5*time.Second)
	wait := kinds.repairAfterLast - kinds.lastSource
	t.Logf("last source at %v, the repair after it %v later; %d packets, sent at %v", kinds.lastSource, wait, len(kinds.at), kinds.at)
	if kinds.repairAfterLast == 0 || wait <= 0 || wait > 2*time.Millisecond {
		t.Errorf("the repair owed after the last source went %v after it, want within a pacing interval (2 ms)", wait)
	}
}
