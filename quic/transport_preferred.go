package quic

// A server's preferred address (RFC 9000 section 9.6): the Transport reads
// a second socket, Transport.PreferredConn, and routes its datagrams by
// connection ID as it does the first one's; its Listener's connections
// offer the socket's address in preferred_address. A connection sends
// from the first socket until the core reports that the client's newest
// packet came to the preferred address (core.EventPreferredAddressUsed),
// and from the second one after.

import (
	"fmt"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/udp"
)

// startPreferred starts reading PreferredConn, if set.
func (t *Transport) startPreferred() error {
	if t.PreferredConn == nil {
		return nil
	}
	addr, err := addrPort(t.PreferredConn.LocalAddr())
	if err != nil {
		return err
	}
	if addr.Addr().IsUnspecified() {
		// A client must be told one address to go to.
		return fmt.Errorf("quic: PreferredConn bound to the unspecified address %v", addr)
	}
	s, err := wrapPathSocket(t.PreferredConn)
	if err != nil {
		return fmt.Errorf("quic: PreferredConn: %w", err)
	}
	// A connection whose Initial came to the preferred address (a client
	// may go there first) belongs to it and answers from it.
	ps := &socket{io: s.io}
	t.pref, t.prefSock = s, ps
	s.start(func(m *udp.Message) { t.handleDatagram(ps, m) })
	return nil
}

// offerPreferred puts the preferred socket's address in a Listener's
// configuration, for the family it belongs to.
func (t *Transport) offerPreferred(cc *core.Config) error {
	if t.pref == nil {
		return nil
	}
	addr, err := addrPort(t.pref.io.LocalAddr())
	if err != nil {
		return err
	}
	if addr.Addr().Is4() {
		cc.PreferredIPv4 = addr
	} else {
		cc.PreferredIPv6 = addr
	}
	return nil
}

// sendPreferred writes datagrams on the preferred socket.
func (t *Transport) sendPreferred(msgs []udp.Message) {
	t.send(t.prefSock, msgs)
}
