package core

import (
	"net/netip"
	"testing"
)

// TestAmplificationBudgetIsPerAddress: before the client's address is
// validated, datagrams that reach the connection from other addresses buy
// no budget and are not processed (RFC 9000 sections 8 and 9). Before,
// a client address got 8,400 bytes for the 1,200 it sent, the rest
// bought by copies of its Initial sent from elsewhere.
func TestAmplificationBudgetIsPerAddress(t *testing.T) {
	ccfg, scfg := testConfigs(t, 1)
	client, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	first, ok := client.NextDatagram(0, nil)
	if !ok {
		t.Fatal("no first flight")
	}
	info, err := PeekInitial(first.Data)
	if err != nil {
		t.Fatal(err)
	}
	server, err := NewServerConn(scfg, 0, ServerParams{RemoteAddr: clientAddr, OriginalDestConnID: info.DstConnID})
	if err != nil {
		t.Fatal(err)
	}
	copyOf := func(b []byte) []byte { return append([]byte(nil), b...) }
	server.HandleDatagram(0, Datagram{Addr: clientAddr, Data: copyOf(first.Data)})
	other := netip.MustParseAddrPort("192.0.2.7:9999")
	for range 6 {
		server.HandleDatagram(0, Datagram{Addr: other, Data: copyOf(first.Data)})
	}
	if got, want := server.amp.received, uint64(len(first.Data)); got != want {
		t.Errorf("budget bought by %d bytes, want the %d the client's address sent", got, want)
	}
	sent := 0
	for {
		d, ok := server.NextDatagram(0, nil)
		if !ok {
			break
		}
		if d.Addr != clientAddr {
			t.Errorf("a datagram to %v", d.Addr)
		}
		sent += len(d.Data)
	}
	if sent == 0 || sent > 3*len(first.Data) {
		t.Errorf("the server sent %d bytes for the %d the client's address sent", sent, len(first.Data))
	}
	if st := server.Stats(); st.PacketsDropped != 6 {
		t.Errorf("%d datagrams dropped, want the 6 from elsewhere", st.PacketsDropped)
	}
}
