package core

import (
	"net/netip"
	"testing"
)

// FuzzPathFrames seals arbitrary frames, seeded with the frames of path
// validation and connection IDs, in authenticated 1-RTT packets, and
// gives them to the server from a new port of the client's (a NAT
// rebinding, RFC 9000 section 9.3) and then from its old address, and to
// the client: following the peer, validating its address and answering
// challenges must never panic, and the server sends only to one of the
// two addresses the client used.
func FuzzPathFrames(f *testing.F) {
	data := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	f.Add(append([]byte{0x1a}, data...))                                                                                 // PATH_CHALLENGE
	f.Add(append([]byte{0x1b}, data...))                                                                                 // PATH_RESPONSE
	f.Add(append(append([]byte{0x1a}, data...), 0x1b, 8, 7, 6, 5, 4, 3, 2, 1, 0x01))                                     // both and a PING
	f.Add([]byte{0x01})                                                                                                  // PING: a non-probing packet
	f.Add([]byte{0x19, 0x01})                                                                                            // RETIRE_CONNECTION_ID 1
	f.Add([]byte{0x18, 0x05, 0x04, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) // NEW_CONNECTION_ID retiring prior ones
	f.Add([]byte{0x02, 0x05, 0x00, 0x00, 0x00})                                                                          // ACK
	f.Fuzz(func(t *testing.T, payload []byte) {
		p := confirmedPair(t, 11)
		rebound := netip.AddrPortFrom(clientAddr.Addr(), 50000)
		p.server.HandleDatagram(p.now, Datagram{Addr: rebound, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, payload, 0)})
		for range 50 {
			if !p.step() {
				break
			}
		}
		if a := p.server.RemoteAddr(); a != clientAddr && a != rebound {
			t.Fatalf("the server sends to %v, neither of the client's addresses", a)
		}
	})
}
