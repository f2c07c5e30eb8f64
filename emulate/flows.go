//go:build linux

package emulate

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/satquic/satquic/emulate/internal/batchio"
	"github.com/satquic/satquic/emulate/internal/rtio"
)

// flow is one client of the relay, with its own upstream socket so that
// the server sees one source address per client, as behind a NAT.
type flow struct {
	id         uint32
	client     netip.AddrPort
	conn       *batchio.Conn
	fd         int
	lastActive atomic.Int64 // time since the clock's epoch, in ns
	closed     atomic.Bool
}

func (f *flow) touch(now time.Duration) { f.lastActive.Store(int64(now)) }

// close unregisters the flow's socket from the downlink poller and
// closes it.
func (f *flow) close(in *rtio.Poller) {
	if f.closed.CompareAndSwap(false, true) {
		in.Remove(f.fd)
		f.conn.UDP().Close()
	}
}

// flowTable finds flows by client address (uplink ingress) and by id (the
// trailer of a packet leaving either direction).
type flowTable struct {
	mu     sync.RWMutex
	byAddr map[netip.AddrPort]*flow
	byID   map[uint32]*flow
	nextID uint32
}

func newFlowTable() flowTable {
	return flowTable{byAddr: map[netip.AddrPort]*flow{}, byID: map[uint32]*flow{}}
}

func (t *flowTable) lookup(addr netip.AddrPort) *flow {
	rtio.SpinRLock(&t.mu)
	defer t.mu.RUnlock()
	return t.byAddr[addr]
}

func (t *flowTable) byFlowID(id uint32) *flow {
	rtio.SpinRLock(&t.mu)
	defer t.mu.RUnlock()
	return t.byID[id]
}

func (t *flowTable) count() int {
	rtio.SpinRLock(&t.mu)
	defer t.mu.RUnlock()
	return len(t.byID)
}

func (t *flowTable) remove(f *flow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byID, f.id)
	delete(t.byAddr, f.client)
}

func (t *flowTable) add(f *flow) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextID++
	f.id = t.nextID
	t.byAddr[f.client] = f
	t.byID[f.id] = f
}

// removeIdle takes out the flows last active before cutoff.
func (t *flowTable) removeIdle(cutoff time.Duration) []*flow {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*flow
	for id, f := range t.byID {
		if time.Duration(f.lastActive.Load()) < cutoff {
			delete(t.byID, id)
			delete(t.byAddr, f.client)
			out = append(out, f)
		}
	}
	return out
}

func (t *flowTable) removeAll() []*flow {
	return t.removeIdle(time.Duration(1<<63 - 1))
}

// flowFor returns the client's flow, opening it on first sight; nil when
// the relay is closing, full, or cannot open an upstream socket.
func (r *Relay) flowFor(client netip.AddrPort, now time.Duration) *flow {
	if f := r.flows.lookup(client); f != nil {
		f.touch(now)
		return f
	}
	if r.closing.Load() || r.flows.count() >= r.cfg.MaxFlows {
		return nil
	}
	c, err := net.DialUDP("udp", nil, r.upstream)
	if err != nil {
		return nil
	}
	conn, err := wrapUDP(c)
	if err != nil {
		return nil
	}
	fd, err := conn.FD()
	if err != nil {
		c.Close()
		return nil
	}
	f := &flow{client: client, conn: conn, fd: fd}
	f.touch(now)
	r.flows.add(f)
	if err := r.downIn.Add(fd, f.id); err != nil {
		r.flows.remove(f)
		c.Close()
		return nil
	}
	return f
}

// readFlows is the downlink's ingress: a high-priority thread that reads the
// server's datagrams from whichever flow sockets have some.
func (r *Relay) readFlows(started chan<- struct{}) {
	defer r.wg.Done()
	r.down.stats.threadStarted(rtio.LockThread(rtio.Realtime))
	started <- struct{}{}
	msgs := newReadBuffers(readBatch, readSize(r.cfg.Down.MTU, r.overhead))
	pkts := make([][]byte, 0, readBatch)
	for {
		ready, stopped, err := r.downIn.Wait()
		if stopped || err != nil {
			return
		}
		for _, id := range ready {
			f := r.flows.byFlowID(id)
			if f == nil {
				continue
			}
			// A server not (yet) listening answers with ICMP port
			// unreachable, reported (once) as an error on the next read:
			// it ends nothing, the flow stays. A closing flow's socket
			// reports that it is closed.
			n, err := f.conn.TryReadBatch(msgs)
			if err != nil {
				if !errors.Is(err, syscall.ECONNREFUSED) && !f.closed.Load() {
					r.down.stats.internalError()
					time.Sleep(time.Millisecond) // no spinning on an error that persists
				}
				continue
			}
			now := r.clk.Now()
			f.touch(now)
			pkts = r.stampAll(pkts[:0], msgs[:n], f.id, now, r.down.stats)
			if len(pkts) > 0 {
				r.down.offer(pkts)
			}
		}
	}
}

// stampAll copies the datagrams read into pooled, trailed buffers.
func (r *Relay) stampAll(pkts [][]byte, msgs []batchio.Message, flow uint32, now time.Duration, st *dirStats) [][]byte {
	for _, m := range msgs {
		if m.Truncated {
			st.tooBig()
			continue
		}
		pkts = append(pkts, r.stamp(m.Buf[:m.N], flow, now))
	}
	return pkts
}

// readSize is the read buffer for a link: one byte more than the largest
// datagram the link's MTU lets through, so that a larger one shows as
// truncated; 64 KiB without an MTU.
func readSize(mtu, overhead int) int {
	if mtu <= 0 || mtu-overhead+1 > 65536 {
		return 65536
	}
	return max(mtu-overhead+1, 1)
}

// expireFlows closes the flows idle for longer than the idle timeout.
func (r *Relay) expireFlows() {
	defer r.wg.Done()
	every := min(max(r.cfg.IdleTimeout/8, 10*time.Millisecond), 5*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			for _, f := range r.flows.removeIdle(r.clk.Now() - r.cfg.IdleTimeout) {
				f.close(r.downIn)
			}
		}
	}
}
