package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// floodRun is what a sender that always has more datagrams than the path
// takes delivered in a fixed time.
type floodRun struct {
	delivered int
	fec       FECStats
	dgram     DatagramStats
}

// runDatagramFlood has the server queue datagrams of 1000 bytes faster
// than the p2p path carries them, into a send queue of 64, for 5 s of
// virtual time over the downlink loss spec.
func runDatagramFlood(t *testing.T, ccfg, scfg *Config, loss string) floodRun {
	t.Helper()
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	scfg.DatagramSendQueue = 64
	var r floodRun
	sp := newSimPair(t, lossOnly(t, loss), 44, ccfg, scfg, nil)
	sp.server.tick = time.Millisecond
	seq := 0
	sp.server.app = func(now time.Duration, c *Conn) {
		if !c.HandshakeConfirmed() {
			return
		}
		for range 16 {
			if err := c.SendDatagram(now, numbered(seq, 1000)); err != nil {
				t.Fatalf("SendDatagram: %v", err)
			}
			seq++
		}
	}
	sp.client.app = func(_ time.Duration, c *Conn) {
		for {
			if _, ok := c.ReceiveDatagram(); !ok {
				return
			}
			r.delivered++
		}
	}
	if err := sp.net.Run(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	st := sp.server.conn.Stats()
	r.fec, r.dgram = st.FEC, st.Datagrams
	return r
}

// TestSimOverloadShedsRepairs: a sender that floods a lossy path (its
// DATAGRAM queue overflows because the window is full) is no overloaded
// sender: its repairs go on, and let the auto policy keep the window open,
// so that it delivers more than without FEC. Shedding them there (as a
// first version of the guard did) delivered 2,726 datagrams in 5 s where
// repairs delivered 5,744 and no FEC 2,145.
func TestSimOverloadShedsRepairs(t *testing.T) {
	const loss = "uniform:0.02"
	ccfg, scfg := testConfigs(t, 350)
	plain := runDatagramFlood(t, ccfg, scfg, loss)
	ccfg, scfg = fecConfigs(t, 350, recovery.FECAuto)
	withFEC := runDatagramFlood(t, ccfg, scfg, loss)
	t.Logf("without FEC: %d delivered, %+v", plain.delivered, plain.dgram)
	t.Logf("with FEC: %d delivered, %+v, FEC %+v", withFEC.delivered, withFEC.dgram, withFEC.fec)
	if withFEC.dgram.SendDropped == 0 || withFEC.fec.RepairsShed != 0 || withFEC.fec.RepairsSent == 0 {
		t.Errorf("path-limited flood: %d datagrams dropped, %d repairs shed, %d sent", withFEC.dgram.SendDropped, withFEC.fec.RepairsShed, withFEC.fec.RepairsSent)
	}
	if withFEC.delivered < plain.delivered*3/2 {
		t.Errorf("%d datagrams delivered with FEC, %d without", withFEC.delivered, plain.delivered)
	}
}

// TestOverloadedSenderShedsRepairs: a send queue that overflows while the
// window has room for all of it (the application outran the connection's
// turns) marks
// the sender overloaded: the repairs owed are shed, none goes while the
// queue drains to half its size, and every datagram left in the queue is
// sent.
func TestOverloadedSenderShedsRepairs(t *testing.T) {
	ccfg, scfg := fecConfigs(t, 351, recovery.FECAuto)
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	// A queue the initial window holds whole.
	scfg.DatagramSendQueue = 8
	sp := newSimPair(t, lossOnly(t, "uniform:0.02"), 45, ccfg, scfg, nil)
	sp.run(t, func() bool { s := sp.server.conn; return s != nil && s.HandshakeConfirmed() }, 10*time.Second)
	s := sp.server.conn
	now := sp.net.Now()
	s.fec.send.owed = 3 // as tail protection would owe them
	for i := range 20 {
		if err := s.SendDatagram(now, numbered(i, 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if !s.dgram.overloaded || s.fec.send.owed != 0 || s.fec.send.stats.RepairsShed != 3 {
		t.Fatalf("after the overflow: overloaded %v, %d owed, %d shed", s.dgram.overloaded, s.fec.send.owed, s.fec.send.stats.RepairsShed)
	}
	repairs := s.fec.send.stats.RepairsSent
	for s.dgram.sendQ.len()*2 >= s.dgram.sendLimit {
		s.fec.send.owed = 1 // as the controller would owe one
		if _, ok := s.NextDatagram(now, nil); !ok {
			t.Fatalf("the window closed with %d queued", s.dgram.sendQ.len())
		}
	}
	if s.fec.send.stats.RepairsSent != repairs {
		t.Errorf("%d repairs sent while the overloaded queue drained", s.fec.send.stats.RepairsSent-repairs)
	}
	if s.sendBacklogged() {
		t.Error("still overloaded after the queue drained to half")
	}
}
