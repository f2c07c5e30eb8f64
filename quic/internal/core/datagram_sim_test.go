package core

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// datagramRun is the outcome of a server sending datagrams to a client
// over a lossy path in virtual time.
type datagramRun struct {
	sent     int
	got      map[int]bool
	corrupt  int
	server   DatagramStats
	client   DatagramStats
	repairs  uint64
	recovers uint64
}

// runDatagramDownload sends n numbered datagrams of size bytes from the
// server to the client over p2p with the downlink loss spec, all queued
// once the handshake completed (a burst the congestion controller paces
// out), and runs until the server has nothing in flight.
func runDatagramDownload(t *testing.T, ccfg, scfg *Config, loss string, n, size int) datagramRun {
	t.Helper()
	ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
	scfg.DatagramSendQueue = n
	r := datagramRun{got: map[int]bool{}}
	sp := newSimPair(t, lossOnly(t, loss), 42, ccfg, scfg, nil)
	sp.server.app = func(now time.Duration, c *Conn) {
		for r.sent < n && c.HandshakeConfirmed() {
			if err := c.SendDatagram(now, numbered(r.sent, size)); err != nil {
				t.Fatalf("SendDatagram %d: %v", r.sent, err)
			}
			r.sent++
		}
	}
	sp.client.app = func(_ time.Duration, c *Conn) {
		for {
			b, ok := c.ReceiveDatagram()
			if !ok {
				return
			}
			i := int(binary.BigEndian.Uint32(b))
			if string(b) != string(numbered(i, size)) {
				r.corrupt++
			}
			r.got[i] = true
		}
	}
	sp.run(t, func() bool {
		s := sp.server.conn
		return r.sent == n && s != nil && s.Stats().BytesInFlight == 0 && !s.dgram.hasQueued()
	}, 60*time.Second)
	s, c := sp.server.conn.Stats(), sp.client.conn.Stats()
	r.server, r.client = s.Datagrams, c.Datagrams
	r.repairs, r.recovers = s.FEC.RepairsSent, c.FEC.SymbolsRecovered
	return r
}

// TestSimDatagramsFEC: packets that carry datagrams are FEC source
// symbols, and a datagram in a packet the client's decoder rebuilt is
// delivered. The same path without FEC loses those datagrams for good:
// they are never sent again.
func TestSimDatagramsFEC(t *testing.T) {
	const n, size, loss = 2000, 1000, "uniform:0.02"
	ccfg, scfg := testConfigs(t, 340)
	plain := runDatagramDownload(t, ccfg, scfg, loss, n, size)
	ccfg, scfg = fecConfigs(t, 340, recovery.FECHide)
	withFEC := runDatagramDownload(t, ccfg, scfg, loss, n, size)
	for _, r := range []struct {
		name string
		datagramRun
	}{{"without FEC", plain}, {"with FEC", withFEC}} {
		t.Logf("%s: %d of %d delivered; server %+v; client %+v; %d repairs sent, %d symbols rebuilt",
			r.name, len(r.got), n, r.server, r.client, r.repairs, r.recovers)
		if r.corrupt != 0 {
			t.Errorf("%s: %d corrupted datagrams", r.name, r.corrupt)
		}
		if r.server.Sent != n || r.client.Received != uint64(len(r.got)) {
			t.Errorf("%s: server sent %d, client received %d, %d distinct", r.name, r.server.Sent, r.client.Received, len(r.got))
		}
	}
	// Without FEC the datagrams of lost packets are missing: each missing
	// one was in a packet declared lost, and none came again.
	if plain.server.Lost == 0 || len(plain.got) == n || len(plain.got)+int(plain.server.Lost) < n || plain.client.RebuiltByFEC != 0 {
		t.Errorf("without FEC: %d delivered, %d lost", len(plain.got), plain.server.Lost)
	}
	// With FEC the losses are rebuilt: far more arrive.
	if withFEC.client.RebuiltByFEC == 0 || withFEC.recovers < withFEC.client.RebuiltByFEC {
		t.Errorf("with FEC: %d datagrams rebuilt, %d symbols", withFEC.client.RebuiltByFEC, withFEC.recovers)
	}
	if missing, plainMissing := n-len(withFEC.got), n-len(plain.got); missing*4 > plainMissing {
		t.Errorf("with FEC %d datagrams missing, without %d: want at most a quarter", missing, plainMissing)
	}
}
