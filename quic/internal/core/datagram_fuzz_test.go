package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// FuzzDatagramFrames seals arbitrary payloads in authenticated 1-RTT
// packets for an established connection whose ends enabled DATAGRAM
// frames, seeded with DATAGRAM frames with and without their Length field,
// truncated, oversized and mixed with other frames: nothing panics, a
// connection that stays open delivers what it counted, and one that
// closes does so with a transport error of its own or because the payload
// held the peer's CONNECTION_CLOSE.
func FuzzDatagramFrames(f *testing.F) {
	with := frameBytes(f, &wire.DatagramFrame{Data: []byte("with length"), DataLenPresent: true})
	without := frameBytes(f, &wire.DatagramFrame{Data: []byte("to the end")})
	f.Add(with)
	f.Add(without)
	f.Add(append(append([]byte{}, with...), without...))
	f.Add(append([]byte{0x01}, with...))
	f.Add(frameBytes(f, &wire.DatagramFrame{DataLenPresent: true}))
	f.Add([]byte{byte(wire.FrameTypeDatagram)})
	f.Add(frameBytes(f, &wire.DatagramFrame{Data: make([]byte, 1300), DataLenPresent: true}))
	for i := range with {
		f.Add(with[:i])
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		ccfg, scfg := testConfigs(t, 9)
		ccfg.EnableDatagrams, scfg.EnableDatagrams = true, true
		scfg.MaxReceiveDatagramSize = 1250
		p := newPair(t, ccfg, scfg, 5*time.Millisecond)
		p.mustRun(p.confirmed, 5*time.Second)
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		if err := p.server.Err(); err != nil {
			var ce *ConnError
			if !asConnError(err, &ce) || (ce.Application && !ce.Remote) {
				t.Fatalf("closed with %v", err)
			}
			return
		}
		n := 0
		for {
			if _, ok := p.server.ReceiveDatagram(); !ok {
				break
			}
			n++
		}
		if st := p.server.Stats().Datagrams; uint64(n)+st.ReceiveDropped != st.Received {
			t.Fatalf("read %d datagrams, stats %+v", n, st)
		}
	})
}
