package tunnel

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/satquic/satquic/connectip"
	"github.com/satquic/satquic/internal/inetsum"
	"github.com/satquic/satquic/tunnel/tunneltest"
)

// ipv4Packet is tunneltest.IPv4Packet between the addresses src and dst.
func ipv4Packet(src, dst string, size int, seq uint32) []byte {
	return tunneltest.IPv4Packet(netip.MustParseAddr(src), netip.MustParseAddr(dst), size, seq)
}

// running is a client and a proxy joined by an in-memory carrier, each
// forwarding to its own in-memory device.
type running struct {
	clientDev, proxyDev *tunneltest.Device
	clientFwd, proxyFwd *Forwarder
	cancel              context.CancelFunc
	errs                chan error
	stopOnce            sync.Once
}

// stop ends both forwarders and checks that they ended cleanly.
func (r *running) stop(t testing.TB) {
	r.stopOnce.Do(func() {
		r.cancel()
		for range 2 {
			if err := <-r.errs; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	})
}

func startTunnel(t testing.TB, queueLen int) *running {
	t.Helper()
	pair := newSessionPair(t)
	r := &running{clientDev: tunneltest.NewDevice(1500), proxyDev: tunneltest.NewDevice(1500), errs: make(chan error, 2)}
	r.clientFwd = New(r.clientDev, pair.client, Config{QueueLen: queueLen})
	r.proxyFwd = New(r.proxyDev, pair.proxy, Config{QueueLen: queueLen})
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.errs <- r.clientFwd.Run(ctx) }()
	go func() { r.errs <- r.proxyFwd.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// TestTenThousandPacketsEachWay sends 10,000 packets each way, in windows
// smaller than the queue, so that nothing may be lost: every one arrives,
// in order, with its TTL decremented once.
func TestTenThousandPacketsEachWay(t *testing.T) {
	r := startTunnel(t, 1024)
	const total, window = 10000, 500
	var wg sync.WaitGroup
	var failed atomic.Bool
	for _, dir := range []struct {
		from, to *tunneltest.Device
		src, dst string
	}{{r.clientDev, r.proxyDev, "10.8.0.2", "203.0.113.1"}, {r.proxyDev, r.clientDev, "203.0.113.1", "10.8.0.2"}} {
		wg.Go(func() {
			for start := 0; start < total; start += window {
				for i := start; i < start+window; i++ {
					dir.from.Inject <- ipv4Packet(dir.src, dir.dst, 60+i%1220, uint32(i))
				}
				for i := start; i < start+window; i++ {
					p := dir.to.Expect(t)
					if got := binary.BigEndian.Uint32(p[len(p)-4:]); got != uint32(i) || len(p) != 60+i%1220 || p[8] != 63 {
						t.Errorf("packet %d: got number %d, %d bytes, TTL %d", i, got, len(p), p[8])
						failed.Store(true)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return
	}
	// The counters are read once the forwarders stopped: a packet leaves
	// the device before the forwarder counts it.
	r.stop(t)
	for _, f := range []*Forwarder{r.clientFwd, r.proxyFwd} {
		st := f.Stats()
		if st.DeviceRead.Packets != total || st.Tunneled.Packets != total || st.Delivered.Packets != total ||
			st.OverloadDrops != 0 || st.Refused != 0 || st.Sessions[0].Received.Packets != total {
			t.Fatalf("stats %+v", st)
		}
	}
}

func TestPacketTooBigBackIntoTheDevice(t *testing.T) {
	r := startTunnel(t, 0)
	big := ipv4Packet("10.8.0.2", "203.0.113.1", 1400, 1)
	big[6] = 0x40 // DF
	big[10], big[11] = 0, 0
	binary.BigEndian.PutUint16(big[10:12], inetsum.Checksum(0, big[:20]))
	r.clientDev.Inject <- big
	icmp := r.clientDev.Expect(t)
	h, err := connectip.ParseIPHeader(icmp)
	if err != nil {
		t.Fatal(err)
	}
	msg := icmp[h.HeaderLen:]
	if h.Protocol != 1 || msg[0] != 3 || msg[1] != 4 || binary.BigEndian.Uint16(msg[6:8]) != 1280 {
		t.Fatalf("not a fragmentation-needed with MTU 1280: %+v % x", h, msg[:8])
	}
	if h.Dst != netip.MustParseAddr("10.8.0.2") || string(msg[8:28]) != string(big[:20]) {
		t.Fatal("the ICMP error is not about the packet sent")
	}
	r.stop(t)
	st := r.clientFwd.Stats()
	if st.Refused != 1 || st.ICMPToDevice != 1 || st.Sessions[0].Sent.Dropped.TooBig != 1 || st.Tunneled.Packets != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// blockedSession is a Session whose WritePacket waits until released, as
// a transport that cannot send does.
type blockedSession struct {
	entered chan struct{}
	release chan struct{}
	sent    atomic.Int64
	closed  chan struct{}
	once    sync.Once
}

func (s *blockedSession) WritePacket(p []byte) ([]byte, error) {
	s.entered <- struct{}{}
	select {
	case <-s.release:
	case <-s.closed:
		return nil, connectip.ErrClosed
	}
	s.sent.Add(1)
	return nil, nil
}

func (s *blockedSession) ReadPacket(b []byte) (int, error) {
	<-s.closed
	return 0, connectip.ErrClosed
}

func (s *blockedSession) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (s *blockedSession) Stats() connectip.Stats { return connectip.Stats{} }

func TestOverloadDropsInsteadOfBlockingTheDevice(t *testing.T) {
	const queueLen, extra = 16, 40
	sess := &blockedSession{entered: make(chan struct{}, 100), release: make(chan struct{}), closed: make(chan struct{})}
	dev := tunneltest.NewDevice(1500)
	f := New(dev, sess, Config{QueueLen: queueLen})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0)
	<-sess.entered // the sender is stuck with the first packet
	for i := range queueLen + extra {
		dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(i+1))
	}
	deadline := time.Now().Add(20 * time.Second)
	for f.Stats().DeviceRead.Packets != 1+queueLen+extra {
		if time.Now().After(deadline) {
			t.Fatalf("the device reader is blocked: %+v", f.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	if st := f.Stats(); st.OverloadDrops != extra {
		t.Fatalf("overload drops %d, want %d", st.OverloadDrops, extra)
	}
	close(sess.release)
	for sess.sent.Load() != 1+queueLen {
		if time.Now().After(deadline) {
			t.Fatalf("sent %d of %d", sess.sent.Load(), 1+queueLen)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if st := f.Stats(); st.Tunneled.Packets != 1+queueLen {
		t.Fatalf("stats %+v", st)
	}
}

func TestRunEndsWhenTheSessionEnds(t *testing.T) {
	sess := &blockedSession{entered: make(chan struct{}, 1), release: make(chan struct{}), closed: make(chan struct{})}
	dev := tunneltest.NewDevice(1500)
	f := New(dev, sess, Config{})
	done := make(chan error, 1)
	go func() { done <- f.Run(context.Background()) }()
	sess.Close()
	select {
	case err := <-done:
		if !errors.Is(err, connectip.ErrClosed) {
			t.Fatalf("Run returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run goes on")
	}
	if !dev.Closed() {
		t.Fatal("the device was left open")
	}
}

func TestStatsJSON(t *testing.T) {
	r := startTunnel(t, 0)
	r.clientDev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, 1)
	r.proxyDev.Expect(t)
	r.stop(t)
	b, err := json.Marshal(r.clientFwd.Stats())
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	tunneled, _ := back["tunneled"].(map[string]any)
	sessions, _ := back["sessions"].([]any)
	if tunneled["packets"] != 1.0 || tunneled["bytes"] != 100.0 || len(sessions) != 1 || back["overload_drops"] != 0.0 {
		t.Fatalf("%s", b)
	}
}

// BenchmarkForwarder sends 1280-byte packets from one in-memory device to
// the other through two forwarders and a client and proxy session, in
// windows the queues hold, and reports the goodput of IP packets.
func BenchmarkForwarder(b *testing.B) {
	r := startTunnel(b, 0)
	const window = 256
	pkt := ipv4Packet("10.8.0.2", "203.0.113.1", 1280, 0)
	b.SetBytes(1280)
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += window {
		n := min(window, b.N-sent)
		go func() {
			for range n {
				r.clientDev.Inject <- pkt
			}
		}()
		for range n {
			<-r.proxyDev.Written
		}
	}
	b.StopTimer()
}

// TestBatchesThroughTheTunnel: between devices that read and write
// batches, over sessions that send batches and read what has arrived
// without waiting, packets pass in order and some writes carry more than
// one packet.
func TestBatchesThroughTheTunnel(t *testing.T) {
	pair := newSessionPair(t)
	from := tunneltest.BatchDevice{Device: tunneltest.NewDevice(1500), Batches: make(chan int, 4096)}
	to := tunneltest.BatchDevice{Device: tunneltest.NewDevice(1500), Batches: make(chan int, 4096)}
	from.Inject = make(chan []byte, 2048)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { errs <- New(from, pair.client, Config{}).Run(ctx) }()
	go func() { errs <- New(to, pair.proxy, Config{}).Run(ctx) }()
	// In windows smaller than the queue, so that nothing may be lost.
	const total, window = 2000, 500
	for start := 0; start < total; start += window {
		for i := start; i < start+window; i++ {
			from.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100+i%1000, uint32(i))
		}
		for i := start; i < start+window; i++ {
			p := to.Expect(t)
			if got := binary.BigEndian.Uint32(p[len(p)-4:]); got != uint32(i) {
				t.Fatalf("packet %d arrived as number %d", i, got)
			}
		}
	}
	cancel()
	for range 2 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if to.LargestBatch() < 2 {
		t.Errorf("every write into the device held one packet")
	}
}

// TestWaitWhenFullHoldsTheDeviceBack: with WaitWhenFull, a stuck session
// stops the device reader once its queue is full instead of losing
// packets; released, every packet goes through. Run ends while the
// reader waits.
func TestWaitWhenFullHoldsTheDeviceBack(t *testing.T) {
	const queueLen, extra = 16, 40
	sess := &blockedSession{entered: make(chan struct{}, 100), release: make(chan struct{}), closed: make(chan struct{})}
	dev := tunneltest.NewDevice(1500)
	f := New(dev, sess, Config{QueueLen: queueLen, WaitWhenFull: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0)
	<-sess.entered
	for i := range queueLen + extra {
		dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(i+1))
	}
	// The sender holds one, the queue queueLen, the reader one more.
	deadline := time.Now().Add(20 * time.Second)
	for f.Stats().DeviceRead.Packets != 2+queueLen {
		if time.Now().After(deadline) {
			t.Fatalf("the reader did not fill the queue: %+v", f.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	if st := f.Stats(); st.DeviceRead.Packets != 2+queueLen || st.OverloadDrops != 0 {
		t.Fatalf("the reader went on past a full queue: %+v", st)
	}
	close(sess.release)
	for sess.sent.Load() != 1+queueLen+extra {
		if time.Now().After(deadline) {
			t.Fatalf("sent %d of %d", sess.sent.Load(), 1+queueLen+extra)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A reader waiting for room when Run ends does not hold it up.
	sess = &blockedSession{entered: make(chan struct{}, 100), release: make(chan struct{}), closed: make(chan struct{})}
	dev = tunneltest.NewDevice(1500)
	f = New(dev, sess, Config{QueueLen: 2, WaitWhenFull: true})
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- f.Run(ctx) }()
	for i := range 8 {
		dev.Inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(i))
	}
	for f.Stats().DeviceRead.Packets != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("reader: %+v", f.Stats())
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not end while the reader waited")
	}
}
