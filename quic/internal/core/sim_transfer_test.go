package core

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"testing"
	"time"

	"github.com/satquic/satquic/netsim"
)

// download is a server pushing size bytes on a unidirectional stream it
// opens as soon as it may, and a client reading and hashing them.
type download struct {
	t        testing.TB
	size     int
	chunk    []byte
	id       uint64
	opened   bool
	written  int
	wantSum  [32]byte
	got      int
	sum      hash.Hash
	done     bool
	doneAt   time.Duration
	clientID uint64
	haveID   bool
}

func newDownload(t testing.TB, size int) *download {
	d := &download{t: t, size: size, chunk: payload(64<<10, 7), sum: sha256.New()}
	h := sha256.New()
	for n := 0; n < size; n += len(d.chunk) {
		h.Write(d.chunk[:min(len(d.chunk), size-n)])
	}
	copy(d.wantSum[:], h.Sum(nil))
	return d
}

func (d *download) server(now time.Duration, c *Conn) {
	if !d.opened {
		id, err := c.OpenStream(now, false)
		if err != nil {
			return // before the client's transport parameters
		}
		d.id, d.opened = id, true
	}
	for d.written < d.size {
		off := d.written % len(d.chunk)
		end := min(len(d.chunk), off+d.size-d.written)
		n, err := c.StreamWrite(d.id, d.chunk[off:end])
		if err != nil {
			d.t.Fatalf("StreamWrite: %v (%v)", err, c.Err())
		}
		d.written += n
		if n < end-off {
			return
		}
	}
	if d.written == d.size {
		if err := c.CloseWrite(d.id); err != nil {
			d.t.Fatalf("CloseWrite: %v", err)
		}
		d.written++ // closed
	}
}

func (d *download) client(ev []Event) func(now time.Duration, c *Conn) {
	buf := make([]byte, 64<<10)
	return func(now time.Duration, c *Conn) {
		if !d.haveID {
			return
		}
		for !d.done {
			n, err := c.StreamRead(now, d.clientID, buf)
			d.sum.Write(buf[:n])
			d.got += n
			if err == io.EOF {
				d.done, d.doneAt = true, now
				break
			}
			if err != nil {
				d.t.Fatalf("StreamRead: %v", err)
			}
			if n == 0 {
				break
			}
		}
	}
}

// runDownload transfers size bytes from server to client over prof and
// returns the pair and the download.
// clientApp is the client of a download: it learns the stream the server
// opened and reads it.
func (d *download) clientApp(sp *simPair) func(now time.Duration, c *Conn) {
	read := d.client(nil)
	return func(now time.Duration, c *Conn) {
		if !d.haveID {
			for _, ev := range sp.client.events {
				if ev.Kind == EventStreamOpened {
					d.clientID, d.haveID = ev.StreamID, true
				}
			}
		}
		read(now, c)
	}
}

func runDownload(t *testing.T, prof netsim.Profile, size int, ccfg, scfg *Config, limit time.Duration) (*simPair, *download) {
	d := newDownload(t, size)
	sp := newSimPair(t, prof, 42, ccfg, scfg, nil)
	sp.server.app = d.server
	sp.client.app = d.clientApp(sp)
	sp.run(t, func() bool { return d.done }, limit)
	var got [32]byte
	copy(got[:], d.sum.Sum(nil))
	if d.got != size || got != d.wantSum {
		t.Fatalf("received %d bytes with sha256 %x, want %d bytes with %x", d.got, got, size, d.wantSum)
	}
	return sp, d
}

func logStats(t *testing.T, sp *simPair) {
	for _, c := range []*Conn{sp.server.conn, sp.client.conn} {
		st := c.Stats()
		t.Logf("client=%v: sent %d pkts %d B, recv %d pkts, lost %d, retransmitted %d (%d stream B), PTOs %d, spurious %d, cwnd %d, srtt %v min %v",
			c.isClient, st.PacketsSent, st.BytesSent, st.PacketsReceived, st.PacketsLost, st.PacketsRetransmitted,
			st.StreamBytesRetransmitted, st.Recovery.PTOs, st.Recovery.SpuriousLosses, st.CongestionWindow, st.SmoothedRTT, st.MinRTT)
	}
	up, down := sp.path.Stats()
	t.Logf("up: %d delivered, %d dropped (queue %d); down: %d delivered, %d dropped (queue %d, loss %d), max queue %d B",
		up.Delivered, up.Dropped(), up.DroppedQueue, down.Delivered, down.Dropped(), down.DroppedQueue, down.DroppedLoss, down.MaxQueueBytes)
}

// TestSimTransferP2P moves 10 MiB over the p2p profile (10 Mbit/s, 15 ms
// each way, 25-packet queue) and requires it to finish within 5% of the
// physical limit: the handshake plus the size at the link rate.
func TestSimTransferP2P(t *testing.T) {
	for _, mds := range []int{DefaultMaxDatagramSize, 1452} {
		t.Run(fmt.Sprint(mds), func(t *testing.T) {
			prof := profile(t, "p2p")
			ccfg, scfg := testConfigs(t, 20)
			ccfg.MaxDatagramSize, scfg.MaxDatagramSize = mds, mds
			const size = 10 << 20
			sp, d := runDownload(t, prof, size, ccfg, scfg, 60*time.Second)
			limit := sp.client.completedAt + serialization(size, prof.Down.RateBps)
			ratio := float64(d.doneAt) / float64(limit)
			t.Logf("10 MiB in %v with %d-byte datagrams; physical limit %v (handshake %v); ratio %.4f", d.doneAt, mds, limit, sp.client.completedAt, ratio)
			logStats(t, sp)
			if ratio > 1.05 {
				t.Errorf("transfer took %.1f%% longer than the physical limit, want at most 5%%", 100*(ratio-1))
			}
		})
	}
}
