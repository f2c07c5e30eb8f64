package udp

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/satquic/satquic/internal/ecn"
)

// ioTimeout bounds every wait on a loopback socket in tests.
const ioTimeout = 5 * time.Second

// modes are the paths every round-trip test runs over.
var modes = []struct {
	name string
	opts Options
}{
	{"gso-gro", Options{}},
	{"mmsg", Options{DisableGSO: true, DisableGRO: true}},
	{"portable", Options{Portable: true}},
}

func listen(t testing.TB, network, address string, opts Options) *Conn {
	t.Helper()
	c, err := Listen(network, address, opts)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, address, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// addrOf is the address a peer reaches c at: its port, on loopback when
// it is bound to a wildcard address.
func addrOf(c *Conn, loopback netip.Addr) netip.AddrPort {
	ap := c.LocalAddr().(*net.UDPAddr).AddrPort()
	ip := ap.Addr().Unmap()
	if ip.IsUnspecified() {
		ip = loopback
	}
	return netip.AddrPortFrom(ip, ap.Port())
}

var (
	lo4 = netip.MustParseAddr("127.0.0.1")
	lo6 = netip.MustParseAddr("::1")
)

// datagram is a received datagram, copied out of the read buffers.
type datagram struct {
	data  []byte
	from  netip.AddrPort
	local netip.Addr
	ecn   ecn.Codepoint
	trunc bool
}

// collect reads until it has want datagrams, copying each out of msgs.
func collect(t testing.TB, c *Conn, msgs []Message, want int) []datagram {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(ioTimeout)); err != nil {
		t.Fatal(err)
	}
	var got []datagram
	for len(got) < want {
		n, err := c.ReadBatch(msgs)
		if err != nil {
			t.Fatalf("after %d of %d datagrams: %v", len(got), want, err)
		}
		for _, m := range msgs[:n] {
			got = append(got, datagram{
				data: bytes.Clone(m.Data), from: m.Addr, local: m.Local, ecn: m.ECN, trunc: m.Truncated,
			})
		}
	}
	if len(got) > want {
		t.Fatalf("got %d datagrams, want %d", len(got), want)
	}
	return got
}

// expectSilence checks that nothing more arrives on c for a short while.
func expectSilence(t testing.TB, c *Conn, msgs []Message) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	n, err := c.ReadBatch(msgs)
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("expected no more datagrams, got %d (err %v)", n, err)
	}
}

// mixedBatch builds n datagrams in runs: a run goes to one destination
// with one size, sometimes ending with a shorter datagram, as a QUIC
// sender's packets do, so that the GSO path forms runs of every length.
// Sizes go from 0 to maxSize; each payload starts with its index.
func mixedBatch(rng *rand.Rand, dests []netip.AddrPort, n, maxSize int) []Message {
	msgs := make([]Message, 0, n)
	for len(msgs) < n {
		dst := dests[rng.IntN(len(dests))]
		var size int
		switch rng.IntN(4) {
		case 0:
			size = maxSize
		case 1:
			size = 1200
		case 2:
			size = rng.IntN(40)
		default:
			size = 1 + rng.IntN(maxSize)
		}
		run := 1 + rng.IntN(80)
		for k := 0; k < run && len(msgs) < n; k++ {
			sz := size
			if k == run-1 && rng.IntN(2) == 0 {
				sz = rng.IntN(size + 1)
			}
			data := make([]byte, sz)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			if sz >= 2 {
				data[0], data[1] = byte(len(msgs)>>8), byte(len(msgs))
			}
			msgs = append(msgs, Message{Data: data, Addr: dst})
		}
	}
	return msgs
}

// expectSequence checks that got is exactly want, in order, each from src.
func expectSequence(t testing.TB, got []datagram, want []Message, src netip.AddrPort) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d datagrams, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i].data, want[i].Data) {
			t.Fatalf("datagram %d: got %d bytes %x..., want %d bytes %x...", i,
				len(got[i].data), head(got[i].data), len(want[i].Data), head(want[i].Data))
		}
		if got[i].from != src {
			t.Fatalf("datagram %d: from %v, want %v", i, got[i].from, src)
		}
		if got[i].trunc {
			t.Fatalf("datagram %d: marked truncated", i)
		}
	}
}

func head(b []byte) []byte { return b[:min(len(b), 8)] }

func deadline() time.Time { return time.Now().Add(ioTimeout) }
