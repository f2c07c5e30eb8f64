package gateway

import (
	"net"
	"net/netip"
	"sync"
	"testing"
)

// relaySocket is what natRelay needs of a UDP socket: a *net.UDPConn or a
// memnet Conn.
type relaySocket interface {
	ReadFromUDPAddrPort(b []byte) (int, netip.AddrPort, error)
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
	LocalAddr() net.Addr
	Close() error
}

// natRelay stands for a NAT, on loopback or a memnet network: datagrams from the
// client to its inside socket leave from an outside socket to the server,
// and the server's answers to that outside socket go back to the client.
// rebind moves the mapping to a new outside port, as a NAT does when a
// binding expires or the carrier-grade NAT of a satellite operator
// reassigns it: what the server still sends to the old port is lost.
type natRelay struct {
	listen func(netip.AddrPort) (relaySocket, error)
	inside relaySocket
	server netip.AddrPort

	mu      sync.Mutex
	client  netip.AddrPort
	outside relaySocket
	wg      sync.WaitGroup
}

// newNATRelay starts a relay whose sockets listen opens: the inside one
// at inside, the outside ones on ports of inside's address.
func newNATRelay(t *testing.T, listen func(netip.AddrPort) (relaySocket, error), inside, server netip.AddrPort) *natRelay {
	t.Helper()
	in, err := listen(inside)
	if err != nil {
		t.Fatal(err)
	}
	r := &natRelay{listen: listen, inside: in, server: server}
	if err := r.rebind(); err != nil {
		t.Fatal(err)
	}
	r.wg.Add(1)
	go r.toServer()
	t.Cleanup(r.close)
	return r
}

// rebind gives the relay a new outside port and closes the old one.
func (r *natRelay) rebind() error {
	out, err := r.listen(netip.AddrPortFrom(addrPort(r.inside).Addr(), 0))
	if err != nil {
		return err
	}
	r.mu.Lock()
	old := r.outside
	r.outside = out
	r.mu.Unlock()
	if old != nil {
		_ = old.Close()
	}
	r.wg.Add(1)
	go r.toClient(out)
	return nil
}

// outsideAddr is the address the server sees the client at now.
func (r *natRelay) outsideAddr() netip.AddrPort {
	r.mu.Lock()
	defer r.mu.Unlock()
	return addrPort(r.outside)
}

// insideAddr is the address the client sends to.
func (r *natRelay) insideAddr() netip.AddrPort { return addrPort(r.inside) }

// addrPort is the address s is bound to.
func addrPort(s relaySocket) netip.AddrPort { return s.LocalAddr().(*net.UDPAddr).AddrPort() }

// toServer forwards the client's datagrams from the current outside
// socket, remembering where the client is.
func (r *natRelay) toServer() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := r.inside.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.client = from
		out := r.outside
		r.mu.Unlock()
		_, _ = out.WriteToUDPAddrPort(buf[:n], r.server)
	}
}

// toClient forwards what reaches the outside socket out to the client,
// until out is closed.
func (r *natRelay) toClient(out relaySocket) {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, _, err := out.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		client := r.client
		r.mu.Unlock()
		if client.IsValid() {
			_, _ = r.inside.WriteToUDPAddrPort(buf[:n], client)
		}
	}
}

func (r *natRelay) close() {
	_ = r.inside.Close()
	r.mu.Lock()
	_ = r.outside.Close()
	r.mu.Unlock()
	r.wg.Wait()
}
