package quic

import (
	"net/netip"
	"testing"
	"testing/synctest"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// memStrangerAddr is a third host on the memnet network: a sender with no
// connection to the server.
var memStrangerAddr = netip.MustParseAddrPort("10.0.0.3:5555")

// Modes of FuzzTransportDatagrams, bits of its second argument.
const (
	fuzzToConnection  = 1 << iota // the datagram starts with a short header for the connection
	fuzzFromStranger              // sent from a host with no connection
	fuzzEndsWithToken             // ends with a reset token the server issued
)

// FuzzTransportDatagrams sends arbitrary datagrams to a listening
// Transport with an established connection, from the connection's peer
// or from a stranger, routed to the connection by its ID or to none,
// ending with one of the server's own reset tokens or not: the
// Transport's dispatch (routing, Stateless Reset matching by token,
// Version Negotiation, Initial parsing, stateless answers) never panics,
// and the connection still echoes a stream afterwards (nothing unsealed
// reaches its state, and no reset token of the client's can be forged).
func FuzzTransportDatagrams(f *testing.F) {
	f.Add([]byte{0x40, 1, 2, 3}, uint8(fuzzToConnection))
	f.Add(make([]byte, 1200), uint8(0))
	f.Add([]byte{0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 0}, uint8(fuzzFromStranger))
	f.Add([]byte{0xc0, 0x1a, 0x2a, 0x3a, 0x4a, 0}, uint8(0)) // an unknown version
	f.Add(make([]byte, 40), uint8(fuzzToConnection|fuzzEndsWithToken))
	f.Add(make([]byte, 40), uint8(fuzzFromStranger|fuzzEndsWithToken))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if len(data) > 1500 {
			return
		}
		synctest.Test(t, func(t *testing.T) {
			e := newMemEnv(t, link10ms, nil)
			if _, err := e.n.AddPath(memStrangerAddr.Addr(), memServerAddr.Addr(), link10ms, link10ms); err != nil {
				t.Fatal(err)
			}
			stranger, err := e.n.Listen(memStrangerAddr)
			if err != nil {
				t.Fatal(err)
			}
			c, s := e.connect(nil)
			d := fuzzDatagram(s, data, mode)
			from := e.client.Conn
			if mode&fuzzFromStranger != 0 {
				from = stranger
			}
			for range 3 {
				if _, err := from.WriteTo(d, e.server.Conn.LocalAddr()); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(50 * time.Millisecond)
			synctest.Wait()
			echoOnce(t, c, s, 1000)
			_ = stranger.Close()
		})
	})
}

// fuzzDatagram shapes data as mode asks, with the server connection s's
// connection ID in front and one of its reset tokens at the end.
func fuzzDatagram(s *Conn, data []byte, mode uint8) []byte {
	s.mu.Lock()
	ids := s.core.LocalConnIDs()
	var id wire.ConnectionID
	var tok wire.StatelessResetToken
	if len(ids) > 0 {
		id = ids[0]
		tok, _ = s.core.ResetToken(id)
	}
	s.mu.Unlock()
	var d []byte
	if mode&fuzzToConnection != 0 {
		d = append([]byte{0x40}, id.Bytes()...)
	}
	d = append(d, data...)
	if mode&fuzzEndsWithToken != 0 {
		d = append(d, tok[:]...)
	}
	return d
}
