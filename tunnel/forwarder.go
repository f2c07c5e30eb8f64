package tunnel

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"sync"
	"sync/atomic"

	"github.com/satquic/satquic/connectip"
)

// Device reads and writes whole IP packets, one per call: a TUN interface
// without packet information, or an in-memory stand-in. ReadPacket gives
// packets of at most MTU() bytes. Close unblocks ReadPacket.
type Device interface {
	ReadPacket(b []byte) (int, error)
	WritePacket(p []byte) error
	MTU() int
	Close() error
}

// BatchDevice is a Device that reads and writes several packets per call:
// a TUN interface with offloads, whose reads give the segments of a
// super-packet and whose writes join segments of a flow. ReadPackets
// fills bufs (each of MTU() bytes) and sizes and returns how many it
// filled, waiting only when it has none; WritePackets returns how many
// packets the device refused and the first refusal.
type BatchDevice interface {
	Device
	ReadPackets(bufs [][]byte, sizes []int) (int, error)
	WritePackets(pkts [][]byte) (failed int, err error)
}

// batchReader is a Session that also gives a packet without waiting for
// one (false when none is waiting), so that the packets that arrived
// together are written into the device together.
type batchReader interface {
	TryReadPacket(b []byte) (n int, ok bool, err error)
}

// batchWriter is a Session that sends several packets in one call, so that
// its connection packs and sends them together; refused gets each packet
// not sent with its index, the ICMP error due or nil, and an error
// wrapping connectip.ErrDropped. An error returned ends the session.
type batchWriter interface {
	WritePackets(pkts [][]byte, refused func(i int, icmp []byte, err error)) error
}

// packetGiver is a batchWriter that hands the buffers of the packets it
// sends to its connection rather than copy them
// (connectip.Session.GivePackets): on return each pkts[i] holds a buffer
// the caller owns again, the packet itself or an empty one (or nil) the
// connection gave back in exchange.
type packetGiver interface {
	GivePackets(pkts [][]byte, refused func(i int, icmp []byte, err error)) error
}

// Batches: a device read gives at most deviceBatch packets (a 64 kB
// super-packet cut at a 1400-byte MSS is 47), and a device write takes at
// most writeBatch packets, read from a session into an arena that holds
// them and one more packet of the largest size.
// A sender takes at most sendBatch queued packets at once.
const (
	deviceBatch = 64
	writeBatch  = 64
	sendBatch   = 64
)

// Session is the tunnel's other side, a *connectip.Session: WritePacket
// returns an error wrapping connectip.ErrDropped, and perhaps an ICMP
// error for the sender, for a packet it refuses.
type Session interface {
	ReadPacket(b []byte) (int, error)
	WritePacket(p []byte) (icmp []byte, err error)
	Close() error
	Stats() connectip.Stats
}

// DefaultQueueLen is the length of each device-to-session queue when
// Config.QueueLen is zero: about 12 ms of 1 Gbit/s in 1500-byte packets.
const DefaultQueueLen = 1024

// Config configures a Forwarder.
type Config struct {
	// QueueLen bounds the packets read from the device and waiting for a
	// session; beyond it they are dropped and counted. Zero means
	// DefaultQueueLen.
	QueueLen int
	// WaitWhenFull makes the device reader wait for room in a full queue
	// instead of dropping the packet: for a tunnel's client end, whose
	// session carries only its own device's packets, so that the device's
	// queue holds local senders back (TCP's small queues) rather than
	// they see loss. A Forwarder whose lanes carry many hosts' flows
	// should drop, so that one slow lane does not stall the device.
	WaitWhenFull bool
	// NextSession, when set, makes the Forwarder outlive its session: when
	// the session fails, Run closes it and asks NextSession for the next
	// one (lost is the failure), while the device stays open and its
	// reader keeps reading, dropping and counting (Stats.DownDrops) what
	// it reads until a session is up again. NextSession may take long (it
	// redials with backoff); it should return when ctx ends. An error it
	// returns ends Run with that error. Only for a Forwarder of one
	// session (New).
	NextSession func(ctx context.Context, lost error) (Session, error)
}

// Forwarder moves packets between a Device and one or more Sessions.
type Forwarder struct {
	dev   Device
	lanes []*lane
	free  *bufferStack // the buffers device reads go into
	seed  maphash.Seed
	wait  bool // Config.WaitWhenFull
	next  func(ctx context.Context, lost error) (Session, error)
	stats counters
	wmu   sync.Mutex // device writes come from every lane
}

// lane is one session with its queue from the device. With
// Config.NextSession its session changes over the run: mu guards sess,
// and gate is the current session's, nil while none is up.
type lane struct {
	mu    sync.Mutex
	sess  Session
	queue chan packet
	gate  atomic.Pointer[sessionGate]
}

// session is the lane's current session.
func (l *lane) session() Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sess
}

type packet struct {
	buf []byte
	n   int
}

// New returns a Forwarder between dev and sess; Run starts it.
func New(dev Device, sess Session, cfg Config) *Forwarder {
	f, _ := NewMulti(dev, []Session{sess}, cfg)
	return f
}

// NewMulti returns a Forwarder that spreads the device's packets over
// several sessions, typically CONNECT-IP tunnels on as many connections,
// so that the work of more than one connection (its encryption and
// coding) runs on more than one core. Each flow (addresses, protocol and
// ports, whichever the direction) keeps to one session, so its packets
// stay in order; the sessions' packets all go into the device.
func NewMulti(dev Device, sessions []Session, cfg Config) (*Forwarder, error) {
	if len(sessions) == 0 {
		return nil, errors.New("tunnel: no session")
	}
	if cfg.NextSession != nil && len(sessions) > 1 {
		return nil, errors.New("tunnel: Config.NextSession needs a Forwarder of one session")
	}
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	f := &Forwarder{dev: dev, seed: maphash.MakeSeed(), wait: cfg.WaitWhenFull, next: cfg.NextSession}
	for _, s := range sessions {
		f.lanes = append(f.lanes, &lane{sess: s, queue: make(chan packet, cfg.QueueLen)})
	}
	// At most one buffer per queue slot, a batch in the reader's hands and
	// one in each sender's are in use at once.
	f.free = newBufferStack(f.mtu(), len(sessions)*(cfg.QueueLen+sendBatch)+deviceBatch)
	return f, nil
}

// Run forwards until ctx is done or the device or a session fails (with
// Config.NextSession: or NextSession fails), then closes them all and
// returns: nil after ctx is done, otherwise the failure. A Forwarder runs
// once.
func (f *Forwarder) Run(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	loops := []func(context.Context) error{f.readDevice}
	if f.next != nil {
		f.lanes[0].gate.Store(&sessionGate{ended: make(chan struct{})})
		loops = append(loops, func(ctx context.Context) error { return f.runSeries(ctx, f.lanes[0]) })
	} else {
		for _, l := range f.lanes {
			loops = append(loops,
				func(ctx context.Context) error { return f.sendPackets(ctx, l, l.sess) },
				func(context.Context) error { return f.receivePackets(l.sess) })
		}
	}
	var wg sync.WaitGroup
	errc := make(chan error, len(loops))
	for _, loop := range loops {
		wg.Go(func() {
			// Once ctx is done the device and sessions are closed under the
			// loops, and what they return then is no failure. Nor is what
			// they return once parent is done: the other end of the tunnel,
			// stopped by the same parent, may close it before ctx learns
			// of it (a context is done before its children are).
			if err := loop(ctx); err != nil && ctx.Err() == nil && parent.Err() == nil {
				errc <- err
			}
			cancel()
		})
	}
	<-ctx.Done()
	closeErrs := []error{f.dev.Close()}
	for _, l := range f.lanes {
		if f.next != nil {
			break // runSeries closes each of its sessions
		}
		if err := l.sess.Close(); !errors.Is(err, connectip.ErrClosed) {
			closeErrs = append(closeErrs, err)
		}
	}
	wg.Wait()
	close(errc)
	if err, ok := <-errc; ok {
		return err
	}
	if err := errors.Join(closeErrs...); err != nil {
		return fmt.Errorf("tunnel: closing: %w", err)
	}
	return nil
}

// readDevice reads packets from the device into their flow's queue,
// dropping those for which the queue has no room rather than waiting
// (unless Config.WaitWhenFull).
func (f *Forwarder) readDevice(ctx context.Context) error {
	bd, batched := f.dev.(BatchDevice)
	n := 1
	if batched {
		n = deviceBatch
	}
	bufs, sizes := make([][]byte, n), make([]int, n)
	for {
		f.free.fill(bufs)
		var got int
		var err error
		if batched {
			got, err = bd.ReadPackets(bufs, sizes)
		} else {
			sizes[0], err = f.dev.ReadPacket(bufs[0])
			got = 1
		}
		if err != nil {
			return fmt.Errorf("tunnel: reading the device: %w", err)
		}
		for i := range got {
			if !f.dispatch(ctx, bufs[i], sizes[i]) {
				return nil
			}
			bufs[i] = nil
		}
	}
}

// dispatch queues a packet read from the device on its flow's lane, or
// drops it when the lane's queue is full, or waits for room with
// Config.WaitWhenFull: false when ctx ended meanwhile.
func (f *Forwarder) dispatch(ctx context.Context, buf []byte, n int) bool {
	f.stats.deviceRead.add(n)
	l := f.lanes[0]
	if len(f.lanes) > 1 {
		l = f.lanes[flowHash(f.seed, buf[:n])%uint64(len(f.lanes))]
	}
	// With Config.NextSession the lane may be without a session: its
	// packet is dropped, as a link that is down drops it.
	var ended <-chan struct{}
	if f.next != nil {
		g := l.gate.Load()
		if g == nil {
			f.dropDown(buf)
			return true
		}
		ended = g.ended
	}
	p := packet{buf: buf, n: n}
	// Room in the queue is the common case: a send that cannot block is a
	// fraction of the select below, which costs about a sixth of the
	// reader's time when made for each packet.
	select {
	case l.queue <- p:
		return true
	default:
	}
	if f.wait {
		select {
		case l.queue <- p:
			return true
		case <-ended: // nil, never ready, without Config.NextSession
			f.dropDown(buf)
			return true
		case <-ctx.Done():
			f.free.put(buf)
			return false
		}
	}
	select {
	case l.queue <- p:
	default:
		f.stats.overload.Add(1)
		f.free.put(buf)
	}
	return true
}

// sendPackets gives a lane's queued packets to its session and writes the
// ICMP errors it answers some with back into the device: all those
// waiting at once, for a session that takes a batch.
//
// A session that takes the packets' buffers (packetGiver) gets them, and
// the buffers it gives back in exchange carry the next device reads: a
// packet read from the device is then copied once more on its way, into
// its QUIC packet.
func (f *Forwarder) sendPackets(ctx context.Context, l *lane, sess Session) error {
	bw, batched := sess.(batchWriter)
	if !batched {
		return f.sendOneByOne(ctx, l, sess)
	}
	giver, gives := sess.(packetGiver)
	batch := make([]packet, 0, sendBatch)
	pkts := make([][]byte, 0, sendBatch)
	var refusedPkts, refusedBytes int
	refused := func(i int, icmp []byte, _ error) {
		refusedPkts++
		refusedBytes += batch[i].n // pkts[i] may be another buffer by now
		f.refused(icmp)
	}
	for {
		batch = batch[:0]
		select {
		case p := <-l.queue:
			batch = append(batch, p)
		case <-ctx.Done():
			return nil
		}
	drain:
		for len(batch) < sendBatch {
			select {
			case p := <-l.queue:
				batch = append(batch, p)
			default:
				break drain
			}
		}
		pkts, refusedPkts, refusedBytes = pkts[:0], 0, 0
		total := 0
		for _, p := range batch {
			pkts = append(pkts, p.buf[:p.n])
			total += p.n
		}
		var err error
		if gives {
			err = giver.GivePackets(pkts, refused)
		} else {
			err = bw.WritePackets(pkts, refused)
		}
		// pkts holds the packets' buffers, or those a giver put in their
		// place.
		f.free.putAll(pkts)
		if err != nil {
			return fmt.Errorf("tunnel: sending into the tunnel: %w", err)
		}
		f.stats.tunneled.addN(len(pkts)-refusedPkts, total-refusedBytes)
	}
}

// sendOneByOne gives a lane's queued packets to its session one at a
// time.
func (f *Forwarder) sendOneByOne(ctx context.Context, l *lane, sess Session) error {
	for {
		var p packet
		select {
		case p = <-l.queue:
		case <-ctx.Done():
			return nil
		}
		icmp, err := sess.WritePacket(p.buf[:p.n])
		n := p.n
		f.free.put(p.buf)
		switch {
		case errors.Is(err, connectip.ErrDropped):
			f.refused(icmp)
		case err != nil:
			return fmt.Errorf("tunnel: sending into the tunnel: %w", err)
		default:
			f.stats.tunneled.add(n)
		}
	}
}

// refused counts a packet the session did not send and writes the ICMP
// error about it, if any, into the device.
func (f *Forwarder) refused(icmp []byte) {
	f.stats.refused.Add(1)
	if icmp != nil {
		f.stats.icmp.Add(1)
		f.writeDevice(icmp)
	}
}

// packetLender is a Session that lends the packets it received in its
// own buffers rather than copy them out (connectip.Session.LendPackets):
// LendPackets waits for a batch, TryLendPackets returns nil when none
// waits.
type packetLender interface {
	LendPackets() (*connectip.PacketBatch, error)
	TryLendPackets() *connectip.PacketBatch
}

// receivePackets writes what a session delivers into the device: the
// packets that arrived together in one batch, when the session can tell
// and the device takes batches, straight from the session's buffers
// when it lends them.
func (f *Forwarder) receivePackets(sess Session) error {
	br, _ := sess.(batchReader)
	bd, _ := f.dev.(BatchDevice)
	if pl, ok := sess.(packetLender); ok && bd != nil {
		return f.receiveLent(pl, bd)
	}
	if br == nil || bd == nil {
		return f.receiveOneByOne(sess)
	}
	arena := make([]byte, writeBatch*f.mtu()+maxIPPacket)
	pkts := make([][]byte, 0, writeBatch)
	for {
		pkts = pkts[:0]
		n, err := readWhole(sess.ReadPacket, arena[:maxIPPacket])
		if err != nil {
			return err
		}
		pkts = append(pkts, arena[:n])
		off := n
		for len(pkts) < writeBatch && len(arena)-off >= maxIPPacket {
			n, ok, err := br.TryReadPacket(arena[off : off+maxIPPacket])
			if !ok {
				break
			}
			if errors.Is(err, io.ErrShortBuffer) {
				continue // no IP packet is longer than maxIPPacket
			}
			if err != nil {
				f.writeDeviceBatch(bd, pkts)
				return fmt.Errorf("tunnel: receiving from the tunnel: %w", err)
			}
			pkts = append(pkts, arena[off:off+n])
			off += n
		}
		f.writeDeviceBatch(bd, pkts)
	}
}

// receiveLent is receivePackets over a session that lends its packets:
// the batches waiting, up to writeBatch packets, go into the device in
// one write and back to the session after it.
func (f *Forwarder) receiveLent(pl packetLender, bd BatchDevice) error {
	batches := make([]*connectip.PacketBatch, 0, writeBatch)
	pkts := make([][]byte, 0, 2*writeBatch)
	for {
		b, err := pl.LendPackets()
		if err != nil {
			return fmt.Errorf("tunnel: receiving from the tunnel: %w", err)
		}
		batches = append(batches[:0], b)
		pkts = append(pkts[:0], b.Packets...)
		for len(pkts) < writeBatch {
			b := pl.TryLendPackets()
			if b == nil {
				break
			}
			batches = append(batches, b)
			pkts = append(pkts, b.Packets...)
		}
		f.writeDeviceBatch(bd, pkts)
		for _, b := range batches {
			b.Release()
		}
		clear(batches)
		clear(pkts)
	}
}

// maxIPPacket is the longest IP packet (without IPv6 jumbograms).
const maxIPPacket = 65535

// readWhole reads one packet, skipping any longer than b.
func readWhole(read func([]byte) (int, error), b []byte) (int, error) {
	for {
		n, err := read(b)
		if errors.Is(err, io.ErrShortBuffer) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("tunnel: receiving from the tunnel: %w", err)
		}
		return n, nil
	}
}

// receiveOneByOne writes a session's packets into the device one at a
// time.
func (f *Forwarder) receiveOneByOne(sess Session) error {
	buf := make([]byte, maxIPPacket)
	for {
		n, err := readWhole(sess.ReadPacket, buf)
		if err != nil {
			return err
		}
		f.writeDevice(buf[:n])
	}
}

// mtu is the device's MTU within IP's bounds.
func (f *Forwarder) mtu() int { return min(max(f.dev.MTU(), 1280), maxIPPacket) }

// writeDeviceBatch writes packets into the device in one call, counting
// them as writeDevice does.
func (f *Forwarder) writeDeviceBatch(bd BatchDevice, pkts [][]byte) {
	f.wmu.Lock()
	failed, _ := bd.WritePackets(pkts)
	f.wmu.Unlock()
	f.stats.writeErrors.Add(uint64(failed))
	if failed == 0 {
		for _, p := range pkts {
			f.stats.delivered.add(len(p))
		}
		return
	}
	// Which ones failed is not known: the count of delivered packets is.
	f.stats.delivered.packets.Add(uint64(len(pkts) - failed))
}

// writeDevice writes one packet into the device. A packet the device
// refuses is counted: one bad packet must not stop the tunnel, and a
// device that is gone makes its reader fail too.
func (f *Forwarder) writeDevice(p []byte) {
	f.wmu.Lock()
	err := f.dev.WritePacket(p)
	f.wmu.Unlock()
	if err != nil {
		f.stats.writeErrors.Add(1)
		return
	}
	f.stats.delivered.add(len(p))
}
