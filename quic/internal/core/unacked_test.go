package core

import (
	"testing"
	"time"
)

// StreamBytesUnacked counts what the application wrote until the peer
// acknowledged it, whether it is in flight or still queued behind the
// peer's flow control, and is zero once everything arrived.
func TestStreamBytesUnacked(t *testing.T) {
	ccfg, scfg := testConfigs(t, 5)
	scfg.InitialStreamReceiveWindow = 16 << 10 // the client's writes wait for credit
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	data := payload(40<<10, 1)
	n, err := p.client.StreamWrite(id, data)
	if err != nil || n != len(data) {
		t.Fatalf("wrote %d of %d: %v", n, len(data), err)
	}
	if err := p.client.CloseWrite(id); err != nil {
		t.Fatal(err)
	}
	if got := p.client.Stats().StreamBytesUnacked; got != uint64(len(data)) {
		t.Fatalf("before sending: %d unacknowledged bytes, want %d", got, len(data))
	}
	// The server does not read: the data beyond its window stays queued
	// with nothing in flight once the first part is acknowledged.
	p.mustRun(func() bool { return p.client.Stats().BytesInFlight > 0 }, time.Second)
	p.mustRun(func() bool { return p.client.Stats().BytesInFlight == 0 }, time.Second)
	if got := p.client.Stats().StreamBytesUnacked; got == 0 || got >= uint64(len(data)) {
		t.Fatalf("blocked by flow control: %d unacknowledged bytes of %d", got, len(data))
	}
	buf := make([]byte, 64<<10)
	read := 0
	p.mustRun(func() bool {
		n, _ := p.server.StreamRead(p.now, id, buf)
		read += n
		return read == len(data) && p.client.Stats().StreamBytesUnacked == 0
	}, 5*time.Second)
}
