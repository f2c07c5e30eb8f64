//go:build linux

package interop

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"
)

// rebinder stands for the NAT of the runner's rebind scenario (ns-3's
// "rebind --first-rebind=1s --rebind-freq=5s", with --rebind-addr for
// rebind-addr): between the emulated link and the tap, it sends each
// flow's datagrams to the server from an outside socket, and at the
// scenario's times gives every flow a new outside socket, on a new port
// and, with addr, a new IP address of 127.0.0.0/8. The server's datagrams
// to an outside socket it replaced are lost, as at a NAT whose binding
// changed; the client, which still sends to the same place, knows nothing
// of it.
type rebinder struct {
	inside   *net.UDPConn
	upstream netip.AddrPort
	addr     bool

	mu    sync.Mutex
	flows map[netip.AddrPort]*net.UDPConn // inside source -> outside socket
	// nextIP is the outside address of the next rebinding with addr.
	nextIP  netip.Addr
	rebinds int
	closed  bool
	wg      sync.WaitGroup
	stop    chan struct{}
}

// startRebinder listens on a free port of listen's address, forwards to
// upstream, and rebinds first after first and then every every.
func startRebinder(listen netip.Addr, upstream netip.AddrPort, first, every time.Duration, addr bool) (*rebinder, error) {
	in, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(listen, 0)))
	if err != nil {
		return nil, err
	}
	r := &rebinder{inside: in, upstream: upstream, addr: addr, flows: map[netip.AddrPort]*net.UDPConn{},
		nextIP: listen.Next(), stop: make(chan struct{})}
	r.wg.Go(r.fromInside)
	r.wg.Go(func() { r.schedule(first, every) })
	return r, nil
}

func (r *rebinder) insideAddr() netip.AddrPort {
	return r.inside.LocalAddr().(*net.UDPAddr).AddrPort()
}

// schedule rebinds at first, then every every, until stopped.
func (r *rebinder) schedule(first, every time.Duration) {
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		r.rebind()
		t.Reset(every)
	}
}

// outsideIP is the address of new outside sockets.
func (r *rebinder) outsideIP() netip.Addr {
	if !r.addr || r.rebinds == 0 {
		return r.insideAddr().Addr()
	}
	return r.nextIP
}

// rebind gives every flow a new outside socket.
func (r *rebinder) rebind() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.rebinds++
	ip := r.outsideIP()
	for from, old := range r.flows {
		out, err := r.open(from, ip)
		if err != nil {
			continue // the flow keeps its binding
		}
		_ = old.Close()
		r.flows[from] = out
	}
	if r.addr {
		r.nextIP = r.nextIP.Next()
	}
}

// open opens an outside socket for the flow from the inside source from,
// on ip, and forwards what the server sends it; r.mu is held.
func (r *rebinder) open(from netip.AddrPort, ip netip.Addr) (*net.UDPConn, error) {
	out, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, 0)))
	if err != nil {
		return nil, err
	}
	r.wg.Go(func() { r.toInside(out, from) })
	return out, nil
}

// fromInside forwards what the link delivers, from each flow's outside
// socket.
func (r *rebinder) fromInside() {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := r.inside.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		out := r.flows[from]
		if out == nil && !r.closed {
			if out, err = r.open(from, r.outsideIP()); err == nil {
				r.flows[from] = out
			}
		}
		r.mu.Unlock()
		if out != nil {
			_, _ = out.WriteToUDPAddrPort(buf[:n], r.upstream)
		}
	}
}

// toInside forwards what the server sends to out back into the link,
// until out is replaced or closed.
func (r *rebinder) toInside(out *net.UDPConn, to netip.AddrPort) {
	buf := make([]byte, maxDatagram)
	for {
		n, err := out.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		_, _ = r.inside.WriteToUDPAddrPort(buf[:n], to)
	}
}

// close stops the rebinder and says how many times it rebound.
func (r *rebinder) close() int {
	r.mu.Lock()
	r.closed = true
	close(r.stop)
	_ = r.inside.Close()
	for _, out := range r.flows {
		_ = out.Close()
	}
	n := r.rebinds
	r.mu.Unlock()
	r.wg.Wait()
	return n
}
