//go:build linux

package interop

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/satquic/satquic/interop/capture"
)

// tap is a UDP proxy just in front of the server that records every
// datagram both ways: the capture of the runner's server-side trace
// (trace_node_right.pcap), taken where the server sees the link. Each
// client flow (a source address) gets a socket of its own towards the
// server, so the server sees as many clients as there are flows. It
// adds no delay worth counting (a hop on loopback), and sees neither IP
// headers nor ECN codepoints.
type tap struct {
	pc       *net.UDPConn
	upstream *net.UDPAddr
	mu       sync.Mutex
	flows    map[netip.AddrPort]*tapFlow
	records  []capture.Record
	wg       sync.WaitGroup
	closed   bool
}

type tapFlow struct {
	client netip.AddrPort
	conn   *net.UDPConn
}

// maxDatagram is the largest datagram the tap reads.
const maxDatagram = 65535

// startTap listens on a free port of listen's address and forwards to
// upstream.
func startTap(listen netip.Addr, upstream netip.AddrPort) (*tap, error) {
	pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(listen, 0)))
	if err != nil {
		return nil, err
	}
	t := &tap{pc: pc, upstream: net.UDPAddrFromAddrPort(upstream), flows: map[netip.AddrPort]*tapFlow{}}
	t.wg.Go(t.fromClients)
	return t, nil
}

func (t *tap) addr() netip.AddrPort { return t.pc.LocalAddr().(*net.UDPAddr).AddrPort() }

func (t *tap) record(fromClient bool, client netip.AddrPort, b []byte) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.records = append(t.records, capture.Record{Time: time.Now(), FromClient: fromClient, Client: client,
		Server: t.upstream.AddrPort(), ECN: -1, Data: append([]byte(nil), b...)})
	return true
}

// fromClients reads what the clients send and passes it on.
func (t *tap) fromClients() {
	buf := make([]byte, maxDatagram)
	for {
		n, from, err := t.pc.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		f, err := t.flow(from)
		if err != nil {
			continue
		}
		if t.record(true, from, buf[:n]) {
			_, _ = f.conn.Write(buf[:n])
		}
	}
}

// flow returns the flow of a client, opening its socket the first time.
func (t *tap) flow(client netip.AddrPort) (*tapFlow, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if f := t.flows[client]; f != nil {
		return f, nil
	}
	if t.closed {
		return nil, net.ErrClosed
	}
	// From the client's IP address, so that the server sees it change
	// when a NAT in front gives the client a new one (rebind-addr).
	conn, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(client.Addr(), 0)), t.upstream)
	if err != nil {
		return nil, err
	}
	f := &tapFlow{client: client, conn: conn}
	t.flows[client] = f
	t.wg.Go(func() { t.fromServer(f) })
	return f, nil
}

// fromServer reads what the server sends a flow and passes it on.
func (t *tap) fromServer(f *tapFlow) {
	buf := make([]byte, maxDatagram)
	for {
		n, err := f.conn.Read(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A refused datagram (nothing listens yet or any more)
			// leaves the flow usable.
			continue
		}
		if t.record(false, f.client, buf[:n]) {
			_, _ = t.pc.WriteToUDPAddrPort(buf[:n], f.client)
		}
	}
}

// close stops the tap and returns what it recorded.
func (t *tap) close() []capture.Record {
	t.mu.Lock()
	t.closed = true
	_ = t.pc.Close()
	for _, f := range t.flows {
		_ = f.conn.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return t.records
}
