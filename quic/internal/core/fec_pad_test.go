package core

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/fec"
	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// paddedRun has the server send size bytes on a stream to the client
// over the pair, losing every 25th of its datagrams, and returns the sizes
// of the server's large datagrams (over 1000 bytes) from the first as long
// as the longest on. clientNotPadded makes the client an endpoint that
// does not offer to take padded sources. The download must arrive intact,
// some of it rebuilt from repairs.
func paddedRun(t *testing.T, clientNotPadded bool, size int) []int {
	t.Helper()
	ccfg, scfg := fecConfigs(t, 61, recovery.FECHide)
	ccfg.FEC.notPadded = clientNotPadded
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	p.drop = func(toServer bool, i int, _ []byte) bool { return !toServer && i%25 == 24 }
	d := newDownload(t, size)
	read := d.client(nil)
	p.serverApp = d.server
	p.clientApp = func(now time.Duration, c *Conn) {
		for _, ev := range p.clientEvents {
			if ev.Kind == EventStreamOpened && !d.haveID {
				d.clientID, d.haveID = ev.StreamID, true
			}
		}
		read(now, c)
	}
	start := len(p.sizes[1])
	p.mustRun(func() bool { return d.done }, time.Minute)
	if got := d.sum.Sum(nil); d.got != size || !bytes.Equal(got, d.wantSum[:]) {
		t.Fatalf("received %d of %d bytes, sha256 %x, want %x", d.got, size, got, d.wantSum)
	}
	if st := p.client.Stats().FEC; st.SymbolsRecovered == 0 || st.RepairsRejected != 0 {
		t.Fatalf("client FEC %+v: want rebuilt packets and no repair refused", st)
	}
	var large []int
	for _, s := range p.sizes[1][start:] {
		if s > 1000 {
			large = append(large, s)
		}
	}
	return large[slices.Index(large, slices.Max(large)):]
}

// sameAsFirst counts the sizes equal to the first.
func sameAsFirst(sizes []int) int {
	n := 0
	for _, s := range sizes {
		if s == sizes[0] {
			n++
		}
	}
	return n
}

// TestFECPaddedSources: to a peer that takes padded sources, full source
// packets are as long as the repairs among them, so that the large
// datagrams are almost all of one size (one GSO run); the padding goes
// outside the symbol, and lost packets are still rebuilt from the repairs.
// To a peer that does not take them, FEC_SOURCE_ID comes first, unpadded,
// and only the repairs are that long.
func TestFECPaddedSources(t *testing.T) {
	const size = 1 << 20
	padded := paddedRun(t, false, size)
	if n := sameAsFirst(padded); n < len(padded)*95/100 {
		t.Errorf("padded: %d of %d large datagrams as long as the longest, want 95%%", n, len(padded))
	}
	plain := paddedRun(t, true, size)
	if n := sameAsFirst(plain); n > len(plain)/10 {
		t.Errorf("unpadded: %d of %d large datagrams as long as the longest, want only the repairs", n, len(plain))
	}
	t.Logf("padded: %d of %d large datagrams %d bytes long; unpadded: %d of %d", sameAsFirst(padded), len(padded), padded[0], sameAsFirst(plain), len(plain))
}

// TestSourceIDAfterPadding: FEC_SOURCE_ID may follow PADDING and nothing
// else; its symbol starts right after it.
func TestSourceIDAfterPadding(t *testing.T) {
	payload := append([]byte{0, 0, 0}, appendFrames(t, &wire.FECSourceIDFrame{Seq: 70000}, &wire.PingFrame{})...)
	seq, start, ok := sourceID(payload)
	if !ok || seq != 70000 || start != 3+6 || payload[start] != byte(wire.FrameTypePing) {
		t.Errorf("sourceID = %d, %d, %v", seq, start, ok)
	}
	for _, bad := range [][]byte{{0, 0, 0}, {}, appendFrames(t, &wire.PingFrame{}, &wire.FECSourceIDFrame{Seq: 1})} {
		if _, _, ok := sourceID(bad); ok {
			t.Errorf("sourceID(%x) found a source ID", bad)
		}
	}
	p := fecPair(t, 62)
	p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
	if err := p.server.Err(); err != nil {
		t.Fatalf("PADDING before FEC_SOURCE_ID: %v", err)
	}
}

// TestSourcePadding: the padding makes a full source packet's payload as
// long as the last repair's; none before a repair was sent, for a packet
// more than a repair's overhead short of it or longer, or for a peer that
// does not take it.
func TestSourcePadding(t *testing.T) {
	f := &fecSender{padSources: true}
	if got := f.sourcePadding(1400, 6); got != 0 {
		t.Errorf("before any repair: %d", got)
	}
	f.noteRepairSize(fec.RepairIDLen + 2 + 1400)
	for _, c := range []struct{ symbol, id, want int }{
		{1400, 6, 6}, {1400, 3, 9}, {1401, 6, 5}, {1399, 6, 7}, {1390, 6, 0}, {1407, 6, 0},
	} {
		if got := f.sourcePadding(c.symbol, c.id); got != c.want {
			t.Errorf("symbol %d, id %d: padding %d, want %d", c.symbol, c.id, got, c.want)
		}
		if c.want > 0 && c.want+c.id+c.symbol != repairPacketOverhead+1400 {
			t.Errorf("symbol %d: padded payload %d, repair payload %d", c.symbol, c.want+c.id+c.symbol, repairPacketOverhead+1400)
		}
	}
	f.padSources = false
	if got := f.sourcePadding(1400, 6); got != 0 {
		t.Errorf("peer without the parameter: %d", got)
	}
}
