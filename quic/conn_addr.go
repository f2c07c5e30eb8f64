package quic

import "net/netip"

// RemoteAddrPort is the peer's address, the one RemoteAddr gives, as a
// value: a server that tells every request its client's address compares
// it with the last one it formatted, and RemoteAddr would allocate a
// *net.UDPAddr each time.
func (c *Conn) RemoteAddrPort() netip.AddrPort {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.remote
}
