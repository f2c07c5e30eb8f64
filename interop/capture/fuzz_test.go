package capture

import (
	"net/netip"
	"testing"
	"time"
)

// FuzzAnalyze feeds the analysis datagrams of any content both ways, as a
// corrupting link would deliver them: it must never panic. The seeds are
// the starts of the packet kinds it reads.
func FuzzAnalyze(f *testing.F) {
	long := []byte{0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0x40, 0x20}
	f.Add(long, []byte{0x40, 9, 9, 9, 9, 9, 9, 9, 9, 1})
	f.Add(append([]byte{0xf0}, long[1:]...), []byte{0x41, 1, 2})
	f.Add([]byte{0x80, 0, 0, 0, 0, 8, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0, 0, 1}, []byte{0x40})
	client := netip.MustParseAddrPort("127.0.0.1:1000")
	server := netip.MustParseAddrPort("127.0.0.1:443")
	f.Fuzz(func(t *testing.T, a, b []byte) {
		now := time.Unix(0, 0)
		recs := []Record{
			{Time: now, FromClient: true, Client: client, Server: server, ECN: -1, Data: a},
			{Time: now, FromClient: false, Client: client, Server: server, ECN: -1, Data: b},
			{Time: now, FromClient: true, Client: client, Server: server, ECN: -1, Data: b},
			{Time: now, FromClient: false, Client: client, Server: server, ECN: -1, Data: a},
		}
		Analyze(recs, KeyLog{}).Summary()
	})
}

// TestShortDatagram: a 1-RTT datagram shorter than the connection ID its
// connection uses (a damaged one) is left without a connection.
func TestShortDatagram(t *testing.T) {
	client := netip.MustParseAddrPort("127.0.0.1:1000")
	server := netip.MustParseAddrPort("127.0.0.1:443")
	clientCID := []byte{1, 1, 1, 1, 1, 1, 1, 1}
	serverCID := []byte{2, 2, 2, 2, 2, 2, 2, 2}
	initial := func(dcid, scid []byte) []byte {
		b := []byte{0xc0, 0, 0, 0, 1, 8}
		b = append(append(b, dcid...), 8)
		return append(append(b, scid...), 0, 0) // no token, empty payload
	}
	recs := []Record{
		{FromClient: true, Client: client, Server: server, ECN: -1, Data: initial(serverCID, clientCID)},
		{FromClient: false, Client: client, Server: server, ECN: -1, Data: initial(clientCID, serverCID)},
		{FromClient: true, Client: client, Server: server, ECN: -1, Data: []byte{0x40, 2, 2, 2, 2, 2}},
	}
	a := Analyze(recs, nil)
	if p := a.Datagrams[2].Packets[0]; p.Conn != nil || p.Type != Type1RTT {
		t.Fatalf("short datagram read as %+v", p)
	}
	if len(a.Conns) != 1 || len(a.Conns[0].ServerCIDs) != 1 {
		t.Fatalf("connections %+v", a.Conns)
	}
}
