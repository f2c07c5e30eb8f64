package udp

import (
	"bytes"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
)

// sendInChunks writes msgs in WriteBatch calls of random sizes.
func sendInChunks(t *testing.T, c *Conn, rng *rand.Rand, msgs []Message) {
	t.Helper()
	for sent := 0; sent < len(msgs); {
		end := min(len(msgs), sent+1+rng.IntN(200))
		n, err := c.WriteBatch(msgs[sent:end])
		if err != nil {
			t.Fatalf("write batch: %v (sent %d of %d)", err, n, end-sent)
		}
		if n != end-sent {
			t.Fatalf("sent %d of %d without error", n, end-sent)
		}
		sent = end
	}
}

// byDest keeps the messages for one destination, in order.
func byDest(msgs []Message, dst netip.AddrPort) []Message {
	var out []Message
	for _, m := range msgs {
		if m.Addr == dst {
			out = append(out, m)
		}
	}
	return out
}

func TestRoundTripMixedIPv4(t *testing.T) {
	for mi, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			seed := uint64(100 + mi)
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 1))
			snd := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			var rcvs []*Conn
			var dests []netip.AddrPort
			for range 3 {
				r := listen(t, "udp4", "127.0.0.1:0", mode.opts)
				rcvs = append(rcvs, r)
				dests = append(dests, addrOf(r, lo4))
			}
			batch := mixedBatch(rng, dests, 600, 1452)
			sendInChunks(t, snd, rng, batch)

			src := addrOf(snd, lo4)
			for i, r := range rcvs {
				want := byDest(batch, dests[i])
				msgs := r.NewReadBatch(32)
				got := collect(t, r, msgs, len(want))
				expectSequence(t, got, want, src)
				expectSilence(t, r, msgs)
			}
			checkPathStats(t, mode.name, snd, rcvs, len(batch))
		})
	}
}

// checkPathStats checks that each mode took the path it claims.
func checkPathStats(t *testing.T, mode string, snd *Conn, rcvs []*Conn, sent int) {
	t.Helper()
	s := snd.Stats()
	if s.WriteDatagrams != uint64(sent) {
		t.Errorf("sender counted %d datagrams, sent %d", s.WriteDatagrams, sent)
	}
	var read, calls, gro uint64
	for _, r := range rcvs {
		rs := r.Stats()
		read += rs.ReadDatagrams
		calls += rs.ReadCalls
		gro += rs.GROBuffers
	}
	if read != uint64(sent) {
		t.Errorf("receivers counted %d datagrams, sent %d", read, sent)
	}
	caps := snd.Capabilities()
	switch {
	case mode == "portable":
		if s.WriteCalls != uint64(sent) || calls != read || s.GSOSends != 0 || gro != 0 {
			t.Errorf("portable path: %+v, %d read calls, %d GRO buffers", s, calls, gro)
		}
	case caps.GSO:
		if s.GSOSends == 0 || gro == 0 {
			t.Errorf("GSO path: %d GSO sends, %d GRO buffers", s.GSOSends, gro)
		}
	case caps.Batch:
		if s.GSOSends != 0 || gro != 0 || s.WriteCalls >= uint64(sent) || calls >= read {
			t.Errorf("batched path without GSO: %+v, %d read calls, %d GRO buffers", s, calls, gro)
		}
	}
	t.Logf("%s: %s; sender %+v; receivers %d calls for %d datagrams, %d GRO buffers",
		mode, caps, s, calls, read, gro)
}

func TestRoundTripDualStack(t *testing.T) {
	for mi, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			seed := uint64(200 + mi)
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, 2))
			snd := listen(t, "udp", "[::]:0", mode.opts)
			r4 := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			r6 := listen(t, "udp6", "[::1]:0", mode.opts)
			rds := listen(t, "udp", "[::]:0", mode.opts)
			mapped := netip.AddrPortFrom(netip.AddrFrom16(lo4.As16()), addrOf(rds, lo4).Port())
			rcvs := []*Conn{r4, r6, rds}
			dests := []netip.AddrPort{addrOf(r4, lo4), addrOf(r6, lo6), mapped}
			batch := mixedBatch(rng, dests, 300, 1452)
			sendInChunks(t, snd, rng, batch)

			sport := addrOf(snd, lo4).Port()
			srcs := []netip.AddrPort{
				netip.AddrPortFrom(lo4, sport), netip.AddrPortFrom(lo6, sport), netip.AddrPortFrom(lo4, sport),
			}
			for i, r := range rcvs {
				want := byDest(batch, dests[i])
				msgs := r.NewReadBatch(16)
				got := collect(t, r, msgs, len(want))
				expectSequence(t, got, want, srcs[i])
				expectSilence(t, r, msgs)
			}

			// The dual-stack receiver answers the IPv4 peer at the plain
			// IPv4 address it reported.
			reply := []Message{{Data: []byte("pong"), Addr: srcs[2]}}
			if _, err := rds.WriteBatch(reply); err != nil {
				t.Fatal(err)
			}
			got := collect(t, snd, snd.NewReadBatch(4), 1)
			expectSequence(t, got, reply, netip.AddrPortFrom(lo4, mapped.Port()))
		})
	}
}

func TestRoundTripJumboDatagrams(t *testing.T) {
	// Loopback's 64 KiB MTU lets datagrams far larger than Ethernet's
	// through; GSO runs must then respect the 64 KiB bound on one send.
	for mi, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(300+mi), 3))
			snd := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			rcv := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			dst := addrOf(rcv, lo4)
			batch := mixedBatch(rng, []netip.AddrPort{dst}, 120, 9000)
			batch = append(batch, Message{Data: make([]byte, maxGSOBytes), Addr: dst})
			sendInChunks(t, snd, rng, batch)
			msgs := NewMessages(8, GROBufferSize)
			got := collect(t, rcv, msgs, len(batch))
			expectSequence(t, got, batch, addrOf(snd, lo4))
		})
	}
}

func TestConnectedSocket(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			rcv := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			uc, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(addrOf(rcv, lo4)))
			if err != nil {
				t.Fatal(err)
			}
			snd, err := New(uc, mode.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer snd.Close()
			// No destination on any message: the socket's peer.
			batch := payloadsTo(netip.AddrPort{}, 1000, 1000, 1000, 10)
			if n, err := snd.WriteBatch(batch); n != len(batch) || err != nil {
				t.Fatalf("sent %d of %d: %v", n, len(batch), err)
			}
			got := collect(t, rcv, rcv.NewReadBatch(8), len(batch))
			expectSequence(t, got, batch, addrOf(snd, lo4))
			reply := payloadsTo(got[0].from, 7)
			if n, err := rcv.WriteBatch(reply); n != 1 || err != nil {
				t.Fatalf("reply: %v", err)
			}
			expectSequence(t, collect(t, snd, snd.NewReadBatch(2), 1), reply, addrOf(rcv, lo4))
		})
	}
}

// payloadsTo returns sizes[i]-byte datagrams to dst, each filled with its
// index so that a misplaced split shows.
func payloadsTo(dst netip.AddrPort, sizes ...int) []Message {
	msgs := make([]Message, len(sizes))
	for i, n := range sizes {
		msgs[i] = Message{Data: bytes.Repeat([]byte{byte('a' + i)}, n), Addr: dst}
	}
	return msgs
}
