package emulate

import (
	"time"

	"github.com/satquic/satquic/emulate/internal/rtio"
	"github.com/satquic/satquic/netsim"
)

const tunReadBatch = 16

// startForwarding connects the TUN devices through the link models: what
// the client's namespace sends goes up, what the server's sends comes
// down.
func (n *Namespaces) startForwarding() error {
	var err error
	if n.caps, err = openCaptures(n.cfg.Pcap); err != nil {
		return err
	}
	upOut := &tunSink{n: n, to: n.serverTun, pcap: n.caps.up}
	if n.up, err = newDirection("uplink", n.clk, n.cfg.Up, upOut); err != nil {
		return err
	}
	downOut := &tunSink{n: n, to: n.clientTun, pcap: n.caps.down}
	if n.down, err = newDirection("downlink", n.clk, n.cfg.Down, downOut); err != nil {
		return err
	}
	upOut.stats, downOut.stats = n.up.stats, n.down.stats
	for _, in := range []struct {
		t *tunDevice
		d *direction
	}{{n.clientTun, n.up}, {n.serverTun, n.down}} {
		p, err := watch(in.t)
		if err != nil {
			return err
		}
		n.ingress = append(n.ingress, p)
		started := make(chan struct{})
		n.wg.Add(1)
		go n.readTUN(in.t, p, in.d, started)
		<-started
	}
	return nil
}

func watch(t *tunDevice) (*rtio.Poller, error) {
	fd, err := t.fd()
	if err != nil {
		return nil, err
	}
	p, err := rtio.NewPoller()
	if err != nil {
		return nil, err
	}
	if err := p.Add(fd, 0); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// readTUN is a direction's ingress: a high-priority thread that offers every
// packet the namespace behind t sends to d.
func (n *Namespaces) readTUN(t *tunDevice, p *rtio.Poller, d *direction, started chan<- struct{}) {
	defer n.wg.Done()
	d.stats.threadStarted(rtio.LockThread(rtio.Realtime))
	close(started)
	bufs := make([][]byte, tunReadBatch)
	for i := range bufs {
		bufs[i] = make([]byte, 65536)
	}
	lens := make([]int, tunReadBatch)
	pkts := make([][]byte, 0, tunReadBatch)
	for {
		if _, stopped, err := p.Wait(); stopped || err != nil {
			return
		}
		k, err := t.tryReadBatch(bufs, lens)
		if err != nil {
			d.stats.internalError()
			continue
		}
		pkts = pkts[:0]
		for i := range k {
			b := n.pool.get(lens[i])
			pkts = append(pkts, append(b, bufs[i][:lens[i]]...))
		}
		if len(pkts) > 0 {
			d.offer(pkts)
		}
	}
}

// tunSink writes delivered packets into the other namespace's TUN.
type tunSink struct {
	n     *Namespaces
	to    *tunDevice
	pcap  *pcapWriter
	stats *dirStats
}

func (s *tunSink) send(batch []netsim.Delivery) {
	now := s.n.clk.Now()
	for _, dl := range batch {
		s.sendOne(dl, now)
		s.n.pool.put(dl.Data)
	}
}

func (s *tunSink) sendOne(dl netsim.Delivery, now time.Duration) {
	if dl.CE && !markCE(dl.Data) {
		// RFC 3168 section 7: a router drops instead of marking a packet
		// whose sender is not ECN-capable.
		s.stats.unroutable()
		return
	}
	if s.pcap != nil {
		s.pcap.write(s.n.clk.Epoch.Add(now), dl.Data)
	}
	if err := s.to.write(dl.Data); err != nil {
		s.stats.sendError()
		return
	}
	s.stats.sent(len(dl.Data))
}
