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
)

// memDevice is an in-memory Device: the test plays the kernel, putting
// packets in inject and taking what the tunnel writes from written.
type memDevice struct {
	mtu     int
	inject  chan []byte
	written chan []byte
	done    chan struct{}
	once    sync.Once
}

func newMemDevice(mtu int) *memDevice {
	return &memDevice{mtu: mtu, inject: make(chan []byte, 64), written: make(chan []byte, 4096), done: make(chan struct{})}
}

func (d *memDevice) ReadPacket(b []byte) (int, error) {
	select {
	case p := <-d.inject:
		return copy(b, p), nil
	case <-d.done:
		return 0, errors.New("device closed")
	}
}

func (d *memDevice) WritePacket(p []byte) error {
	select {
	case d.written <- append([]byte(nil), p...):
		return nil
	case <-d.done:
		return errors.New("device closed")
	}
}

func (d *memDevice) MTU() int { return d.mtu }

func (d *memDevice) Close() error {
	d.once.Do(func() { close(d.done) })
	return nil
}

// ipv4Packet builds a UDP-protocol IPv4 packet of size bytes, numbered seq
// in its last four bytes.
func ipv4Packet(src, dst string, size int, seq uint32) []byte {
	p := make([]byte, size)
	p[0], p[8], p[9] = 0x45, 64, 17
	binary.BigEndian.PutUint16(p[2:4], uint16(size))
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(p[12:16], s[:])
	copy(p[16:20], d[:])
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(p[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(p[10:12], ^uint16(sum))
	binary.BigEndian.PutUint32(p[size-4:], seq)
	return p
}

// running is a client and a proxy joined by an in-memory carrier, each
// forwarding to its own in-memory device.
type running struct {
	clientDev, proxyDev *memDevice
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
	r := &running{clientDev: newMemDevice(1500), proxyDev: newMemDevice(1500), errs: make(chan error, 2)}
	r.clientFwd = New(r.clientDev, pair.client, Config{QueueLen: queueLen})
	r.proxyFwd = New(r.proxyDev, pair.proxy, Config{QueueLen: queueLen})
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.errs <- r.clientFwd.Run(ctx) }()
	go func() { r.errs <- r.proxyFwd.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

func receive(t testing.TB, d *memDevice) []byte {
	t.Helper()
	select {
	case p := <-d.written:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("no packet came out of the tunnel")
		return nil
	}
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
		from, to *memDevice
		src, dst string
	}{{r.clientDev, r.proxyDev, "10.8.0.2", "203.0.113.1"}, {r.proxyDev, r.clientDev, "203.0.113.1", "10.8.0.2"}} {
		wg.Go(func() {
			for start := 0; start < total; start += window {
				for i := start; i < start+window; i++ {
					dir.from.inject <- ipv4Packet(dir.src, dir.dst, 60+i%1220, uint32(i))
				}
				for i := start; i < start+window; i++ {
					p := receive(t, dir.to)
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
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(big[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(big[10:12], ^uint16(sum))
	r.clientDev.inject <- big
	icmp := receive(t, r.clientDev)
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
	dev := newMemDevice(1500)
	f := New(dev, sess, Config{QueueLen: queueLen})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	dev.inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0)
	<-sess.entered // the sender is stuck with the first packet
	for i := range queueLen + extra {
		dev.inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(i+1))
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
	dev := newMemDevice(1500)
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
	select {
	case <-dev.done:
	default:
		t.Fatal("the device was left open")
	}
}

func TestStatsJSON(t *testing.T) {
	r := startTunnel(t, 0)
	r.clientDev.inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, 1)
	receive(t, r.proxyDev)
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
				r.clientDev.inject <- pkt
			}
		}()
		for range n {
			<-r.proxyDev.written
		}
	}
	b.StopTimer()
}

// memBatchDevice is a memDevice that reads every packet injected so far
// in one call and records the size of each batch written.
type memBatchDevice struct {
	*memDevice
	batches chan int
}

func (d memBatchDevice) ReadPackets(bufs [][]byte, sizes []int) (int, error) {
	n, err := d.ReadPacket(bufs[0])
	if err != nil {
		return 0, err
	}
	sizes[0] = n
	got := 1
	for got < len(bufs) {
		select {
		case p := <-d.inject:
			sizes[got] = copy(bufs[got], p)
			got++
		default:
			return got, nil
		}
	}
	return got, nil
}

func (d memBatchDevice) WritePackets(pkts [][]byte) (int, error) {
	select {
	case d.batches <- len(pkts):
	default:
	}
	for _, p := range pkts {
		if err := d.WritePacket(p); err != nil {
			return len(pkts), err
		}
	}
	return 0, nil
}

// TestBatchesThroughTheTunnel: between devices that read and write
// batches, over sessions that send batches and read what has arrived
// without waiting, packets pass in order and some writes carry more than
// one packet.
func TestBatchesThroughTheTunnel(t *testing.T) {
	pair := newSessionPair(t)
	from := memBatchDevice{newMemDevice(1500), make(chan int, 4096)}
	to := memBatchDevice{newMemDevice(1500), make(chan int, 4096)}
	from.inject = make(chan []byte, 2048)
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { errs <- New(from, pair.client, Config{}).Run(ctx) }()
	go func() { errs <- New(to, pair.proxy, Config{}).Run(ctx) }()
	// In windows smaller than the queue, so that nothing may be lost.
	const total, window = 2000, 500
	for start := 0; start < total; start += window {
		for i := start; i < start+window; i++ {
			from.inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100+i%1000, uint32(i))
		}
		for i := start; i < start+window; i++ {
			p := receive(t, to.memDevice)
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
	largest := 0
	for len(to.batches) > 0 {
		largest = max(largest, <-to.batches)
	}
	if largest < 2 {
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
	dev := newMemDevice(1500)
	f := New(dev, sess, Config{QueueLen: queueLen, WaitWhenFull: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	dev.inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, 0)
	<-sess.entered
	for i := range queueLen + extra {
		dev.inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(i+1))
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
	dev = newMemDevice(1500)
	f = New(dev, sess, Config{QueueLen: 2, WaitWhenFull: true})
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- f.Run(ctx) }()
	for i := range 8 {
		dev.inject <- ipv4Packet("10.8.0.2", "203.0.113.1", 100, uint32(i))
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
