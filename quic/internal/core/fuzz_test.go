package core

import (
	"testing"
	"time"
)

// FuzzDatagram feeds arbitrary datagrams to a server that has just
// received a client's first flight, and to both ends of an established
// connection: nothing may panic, and a closed connection stays closed.
func FuzzDatagram(f *testing.F) {
	ccfg, scfg := testConfigs(f, 7)
	client, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		f.Fatal(err)
	}
	first, _ := client.NextDatagram(0, nil)
	f.Add(first.Data)
	f.Add(first.Data[:100])
	f.Add([]byte{0x40, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(make([]byte, 1200))
	f.Fuzz(func(t *testing.T, data []byte) {
		ccfg, scfg := testConfigs(t, 7)
		c, err := NewClientConn(ccfg, 0, serverAddr)
		if err != nil {
			t.Fatal(err)
		}
		hello, _ := c.NextDatagram(0, nil)
		info, err := PeekInitial(hello.Data)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewServerConn(scfg, 0, ServerParams{RemoteAddr: clientAddr, OriginalDestConnID: info.DstConnID})
		if err != nil {
			t.Fatal(err)
		}
		s.HandleDatagram(time.Millisecond, Datagram{Addr: clientAddr, Data: hello.Data})
		drain(s, 2*time.Millisecond, Datagram{Addr: clientAddr, Data: append([]byte(nil), data...)})
		drain(c, 3*time.Millisecond, Datagram{Addr: serverAddr, Data: append([]byte(nil), data...)})
	})
	_ = scfg
}

// FuzzFrames seals arbitrary payloads in authenticated 1-RTT packets and
// gives them to both ends of an established connection: frame parsing and
// handling must never panic, whatever the frames say.
func FuzzFrames(f *testing.F) {
	f.Add([]byte{0x01})
	f.Add([]byte{0x08, 0x00, 'h', 'i'})
	f.Add([]byte{0x0f, 0x04, 0x10, 0x02, 'h', 'i'})
	f.Add([]byte{0x02, 0x05, 0x00, 0x00, 0x00})
	f.Add([]byte{0x04, 0x00, 0x01, 0x10})
	f.Add([]byte{0x18, 0x01, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{0x1c, 0x0a, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, payload []byte) {
		p := confirmedPair(t, 9)
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, payload, 0)})
		for range 50 {
			if !p.step() {
				break
			}
		}
	})
}

// drain runs one driver's turn of a connection: Step with in, then its
// output and events.
func drain(c *Conn, now time.Duration, in ...Datagram) {
	c.Step(now, in)
	for {
		if _, ok := c.NextDatagram(now, nil); !ok {
			break
		}
	}
	for {
		if _, ok := c.PollEvent(); !ok {
			break
		}
	}
	c.NextTimer(now)
}
