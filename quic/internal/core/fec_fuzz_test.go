package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// fecPair is a confirmed connection pair with FEC on both ends.
func fecPair(t testing.TB, seed uint64) *pair {
	ccfg, scfg := testConfigs(t, seed)
	ccfg.FEC, ccfg.Recovery.FECPolicy = &FECConfig{}, recovery.FECHide
	scfg.FEC, scfg.Recovery.FECPolicy = &FECConfig{}, recovery.FECHide
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	return p
}

func appendFrames(t testing.TB, fs ...wire.Frame) []byte {
	var b []byte
	for _, f := range fs {
		var err error
		if b, err = f.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// FuzzFECFrames feeds authenticated 1-RTT payloads, FEC frames among
// them, to endpoints that negotiated FEC: hostile repairs, reports of
// recoveries that never happened, source IDs out of place. Nothing may
// panic or hang.
func FuzzFECFrames(f *testing.F) {
	f.Add(appendFrames(f, &wire.FECSourceIDFrame{Seq: 0}, &wire.StreamFrame{StreamID: 0, Data: []byte("hi"), DataLenPresent: true}))
	f.Add(appendFrames(f, &wire.FECRepairFrame{Data: append([]byte{0, 0, 0, 0, 0, 0xf0, 0x02, 0}, make([]byte, 40)...)}))
	f.Add(appendFrames(f, &wire.FECRecoveredFrame{Ranges: []wire.AckRange{{Smallest: 0, Largest: 1000}}}))
	f.Add(appendFrames(f, &wire.PingFrame{}, &wire.FECSourceIDFrame{Seq: 5}))
	f.Add(append([]byte{0, 0, 0, 0}, appendFrames(f, &wire.FECSourceIDFrame{Seq: 9}, &wire.PingFrame{})...))
	f.Fuzz(func(t *testing.T, payload []byte) {
		p := fecPair(t, 11)
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, payload, 0)})
		for range 50 {
			if !p.step() {
				break
			}
		}
	})
}

// TestFECSourceIDMustComeFirst: a FEC_SOURCE_ID frame after another frame
// is a PROTOCOL_VIOLATION.
func TestFECSourceIDMustComeFirst(t *testing.T) {
	p := fecPair(t, 12)
	payload := appendFrames(t, &wire.PingFrame{}, &wire.FECSourceIDFrame{Seq: 5})
	p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
	var ce *ConnError
	if !asConnError(p.server.Err(), &ce) || ce.Code != wire.CodeProtocolViolation {
		t.Fatalf("server error %v, want PROTOCOL_VIOLATION", p.server.Err())
	}
}
