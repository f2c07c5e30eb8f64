package tunnel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

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

// Session is the tunnel's other side, a *connectip.Session: WritePacket
// returns an error wrapping connectip.ErrDropped, and perhaps an ICMP
// error for the sender, for a packet it refuses.
type Session interface {
	ReadPacket(b []byte) (int, error)
	WritePacket(p []byte) (icmp []byte, err error)
	Close() error
	Stats() connectip.Stats
}

// DefaultQueueLen is the device-to-session queue's length when
// Config.QueueLen is zero: about 12 ms of 1 Gbit/s in 1500-byte packets.
const DefaultQueueLen = 1024

// Config configures a Forwarder.
type Config struct {
	// QueueLen bounds the packets read from the device and waiting for the
	// session; beyond it they are dropped and counted. Zero means
	// DefaultQueueLen.
	QueueLen int
}

// Forwarder moves packets between a Device and a Session.
type Forwarder struct {
	dev   Device
	sess  Session
	queue chan packet
	free  chan []byte
	stats counters
	wmu   sync.Mutex // device writes come from the sender and the receiver
}

type packet struct {
	buf []byte
	n   int
}

// New returns a Forwarder between dev and sess; Run starts it.
func New(dev Device, sess Session, cfg Config) *Forwarder {
	if cfg.QueueLen <= 0 {
		cfg.QueueLen = DefaultQueueLen
	}
	size := min(max(dev.MTU(), 1280), 65535)
	f := &Forwarder{
		dev: dev, sess: sess,
		queue: make(chan packet, cfg.QueueLen),
		// One buffer per queue slot, one in the reader's hands and one in
		// the sender's: the reader never waits for a buffer.
		free: make(chan []byte, cfg.QueueLen+2),
	}
	for range cfg.QueueLen + 2 {
		f.free <- make([]byte, size)
	}
	return f
}

// Run forwards until ctx is done or the device or the session fails, then
// closes both and returns: nil after ctx is done, otherwise the failure.
// A Forwarder runs once.
func (f *Forwarder) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	for _, loop := range []func(context.Context) error{f.readDevice, f.sendPackets, f.receivePackets} {
		wg.Go(func() {
			// Once ctx is done the device and session are closed under the
			// loops, and what they return then is no failure.
			if err := loop(ctx); err != nil && ctx.Err() == nil {
				errc <- err
			}
			cancel()
		})
	}
	<-ctx.Done()
	closeErr := errors.Join(f.dev.Close(), f.sess.Close())
	wg.Wait()
	close(errc)
	if err, ok := <-errc; ok {
		return err
	}
	if closeErr != nil && !errors.Is(closeErr, connectip.ErrClosed) {
		return fmt.Errorf("tunnel: closing: %w", closeErr)
	}
	return nil
}

// readDevice reads packets from the device into the queue, dropping those
// for which the queue has no room rather than waiting.
func (f *Forwarder) readDevice(ctx context.Context) error {
	for {
		buf := <-f.free
		n, err := f.dev.ReadPacket(buf)
		if err != nil {
			return fmt.Errorf("tunnel: reading the device: %w", err)
		}
		f.stats.deviceRead.add(n)
		select {
		case f.queue <- packet{buf: buf, n: n}:
		default:
			f.stats.overload.Add(1)
			f.free <- buf
		}
	}
}

// sendPackets gives queued packets to the session and writes the ICMP
// errors it answers some with back into the device.
func (f *Forwarder) sendPackets(ctx context.Context) error {
	for {
		var p packet
		select {
		case p = <-f.queue:
		case <-ctx.Done():
			return nil
		}
		icmp, err := f.sess.WritePacket(p.buf[:p.n])
		n := p.n
		f.free <- p.buf
		switch {
		case errors.Is(err, connectip.ErrDropped):
			f.stats.refused.Add(1)
			if icmp != nil {
				f.stats.icmp.Add(1)
				f.writeDevice(icmp)
			}
		case err != nil:
			return fmt.Errorf("tunnel: sending into the tunnel: %w", err)
		default:
			f.stats.tunneled.add(n)
		}
	}
}

// receivePackets writes what the session delivers into the device.
func (f *Forwarder) receivePackets(ctx context.Context) error {
	buf := make([]byte, 65535)
	for {
		n, err := f.sess.ReadPacket(buf)
		if errors.Is(err, io.ErrShortBuffer) {
			continue // no IP packet is longer than buf
		}
		if err != nil {
			return fmt.Errorf("tunnel: receiving from the tunnel: %w", err)
		}
		f.writeDevice(buf[:n])
	}
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
