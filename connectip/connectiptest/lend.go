package connectiptest

import (
	"context"
	"sync"
	"testing"
)

// LendingEnd is an End that lends its datagrams in buffers of its own,
// behind a one-byte prefix, as an HTTP/3 stream does with its Quarter
// Stream ID (http3.Stream.HoldDatagram). A buffer given back is
// overwritten, so that a packet used after its release shows; one given
// back twice, or never lent, fails the test.
type LendingEnd struct {
	*End
	t    testing.TB
	mu   sync.Mutex
	lent map[*byte]bool
}

// Lending returns e lending its datagrams, for the test t.
func Lending(t testing.TB, e *End) *LendingEnd {
	return &LendingEnd{End: e, t: t, lent: map[*byte]bool{}}
}

func (e *LendingEnd) lend(b []byte) (payload, buf []byte) {
	buf = append([]byte{0xAA}, b...)
	e.mu.Lock()
	e.lent[&buf[0]] = true
	e.mu.Unlock()
	return buf[1:], buf
}

// HoldDatagram waits for a datagram and lends it: payload is the
// datagram, buf the buffer to give back with ReleaseDatagrams.
func (e *LendingEnd) HoldDatagram(ctx context.Context) (payload, buf []byte, err error) {
	b, err := e.ReceiveDatagram(ctx)
	if err != nil {
		return nil, nil, err
	}
	payload, buf = e.lend(b)
	return payload, buf, nil
}

// TryHoldDatagram is HoldDatagram without waiting: ok is false when no
// datagram is there.
func (e *LendingEnd) TryHoldDatagram() (payload, buf []byte, ok bool) {
	b, ok := e.TryReceiveDatagram()
	if !ok {
		return nil, nil, false
	}
	payload, buf = e.lend(b)
	return payload, buf, true
}

// ReleaseDatagrams takes back the buffers lent and overwrites them.
func (e *LendingEnd) ReleaseDatagrams(bufs [][]byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, b := range bufs {
		if !e.lent[&b[0]] {
			e.t.Errorf("connectiptest: a buffer given back twice or never lent")
		}
		delete(e.lent, &b[0])
		for i := range b {
			b[i] = 0xEE
		}
	}
}

// Outstanding is how many buffers are lent and not given back.
func (e *LendingEnd) Outstanding() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.lent)
}
