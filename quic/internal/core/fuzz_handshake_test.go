package core

import (
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// FuzzHandshakeInput feeds arbitrary bytes to the stateless server helpers
// (Version Negotiation, token checks, refusal) and to a client that has
// only sent its first flight, where Version Negotiation and Retry packets
// are handled, and decodes them as a session ticket's resumption entry:
// nothing may panic.
func FuzzHandshakeInput(f *testing.F) {
	ccfg, _ := testConfigs(f, 140)
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		f.Fatal(err)
	}
	hello, _ := c.NextDatagram(0, nil)
	info, _ := PeekInitial(hello.Data)
	v := newValidator(f, 140, time.Second)
	retry, _ := v.Retry(nil, info, clientAddr, 0)
	vn, _ := wire.AppendVersionNegotiation(nil, &wire.VersionNegotiation{
		DstConnID: info.SrcConnID.Bytes(), SrcConnID: info.DstConnID.Bytes(), Versions: []wire.Version{0x1a2a3a4a},
	}, 0)
	f.Add(hello.Data)
	f.Add(retry)
	f.Add(vn)
	f.Add(appendResumeInfo(extraTagClient, &resumeInfo{version: wire.Version1, rtt: time.Second}))
	f.Fuzz(func(t *testing.T, data []byte) {
		VersionNegotiation(nil, data, nil)
		if info, err := PeekInitial(data); err == nil {
			v := newValidator(t, 140, time.Second)
			_, _ = v.Check(info, clientAddr, time.Millisecond)
			_, _ = RefuseInitial(nil, info, wire.CodeConnectionRefused, "fuzz")
		}
		findResumeInfo([][]byte{data}, extraTagClient)
		findResumeInfo([][]byte{append(append([]byte(nil), extraTagServer...), data...)}, extraTagServer)
		ccfg, _ := testConfigs(t, 140)
		c, err := NewClientConn(ccfg, 0, serverAddr)
		if err != nil {
			t.Fatal(err)
		}
		drain(c, 0)
		drain(c, time.Millisecond, Datagram{Addr: serverAddr, Data: append([]byte(nil), data...)})
	})
}
