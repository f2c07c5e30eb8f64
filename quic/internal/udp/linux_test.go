//go:build linux && !purego

package udp

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/satquic/satquic/internal/ecn"
	"golang.org/x/sys/unix"
)

func writeAll(t *testing.T, c *Conn, msgs []Message) {
	t.Helper()
	n, err := c.WriteBatch(msgs)
	if err != nil || n != len(msgs) {
		t.Fatalf("write batch: sent %d of %d: %v", n, len(msgs), err)
	}
}

func requireGSO(t *testing.T, c *Conn) {
	t.Helper()
	if caps := c.Capabilities(); !caps.GSO || !caps.GRO {
		t.Skipf("kernel without UDP GSO/GRO: %s", caps)
	}
}

func TestGSOShortLastSegment(t *testing.T) {
	snd := listen(t, "udp4", "127.0.0.1:0", Options{})
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{DisableGRO: true})
	requireGSO(t, snd)
	batch := payloadsTo(addrOf(rcv, lo4), 1200, 1200, 1200, 1200, 1200, 700)
	writeAll(t, snd, batch)
	if s := snd.Stats(); s.WriteCalls != 1 || s.GSOSends != 1 {
		t.Fatalf("want one GSO send in one call, got %+v", s)
	}
	// Without GRO, the kernel hands the receiver each segment on its own.
	msgs := rcv.NewReadBatch(16)
	got := collect(t, rcv, msgs, len(batch))
	expectSequence(t, got, batch, addrOf(snd, lo4))
	expectSilence(t, rcv, msgs)
}

func TestGSORunBoundaries(t *testing.T) {
	snd := listen(t, "udp4", "127.0.0.1:0", Options{})
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{DisableGRO: true})
	requireGSO(t, snd)
	dst := addrOf(rcv, lo4)
	var batch []Message
	// 70 equal datagrams: a run of 64, then 6 that a shorter datagram
	// ends. A longer datagram starts a new run, a shorter one ends the
	// run it joins, and a change of codepoint starts a new run.
	batch = append(batch, payloadsTo(dst, repeat(1000, 70)...)...)
	batch = append(batch, payloadsTo(dst, 500, 900, 900, 1000, 1000, 600)...)
	tail := payloadsTo(dst, 700, 700, 700, 700)
	tail[2].ECN, tail[3].ECN = ecn.ECT0, ecn.ECT0
	batch = append(batch, tail...)
	writeAll(t, snd, batch)
	// Runs: 64 | 6+500 | 900 900 | 1000 1000 600 | 700 700 | 700 700.
	if s := snd.Stats(); s.GSOSends != 6 || s.WriteCalls != 1 {
		t.Fatalf("want 6 GSO sends in one call, got %+v", s)
	}
	got := collect(t, rcv, rcv.NewReadBatch(64), len(batch))
	expectSequence(t, got, batch, addrOf(snd, lo4))
}

func repeat(size, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

func TestGROSplitsCoalescedBuffer(t *testing.T) {
	snd := listen(t, "udp4", "127.0.0.1:0", Options{})
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{})
	requireGSO(t, snd)
	batch := payloadsTo(addrOf(rcv, lo4), append(repeat(1000, 10), 300)...)
	for i := range batch {
		batch[i].ECN = ecn.ECT1
	}
	writeAll(t, snd, batch)
	// One 64 KiB buffer and output-only messages for the split.
	msgs := make([]Message, 16)
	msgs[0].Buf = make([]byte, GROBufferSize)
	if err := rcv.SetReadDeadline(deadline()); err != nil {
		t.Fatal(err)
	}
	n, err := rcv.ReadBatch(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(batch) {
		t.Fatalf("one read returned %d datagrams, want %d", n, len(batch))
	}
	base := &msgs[0].Buf[0]
	for i, m := range msgs[:n] {
		if !bytes.Equal(m.Data, batch[i].Data) || m.ECN != ecn.ECT1 || m.Addr != addrOf(snd, lo4) {
			t.Fatalf("datagram %d: %d bytes %x ecn %v from %v", i, len(m.Data), head(m.Data), m.ECN, m.Addr)
		}
		// Split, not copied: every datagram lies in the one buffer, and
		// cannot grow into its neighbour.
		if off := offsetIn(msgs[0].Buf, m.Data); off != i*1000 || cap(m.Data) != len(m.Data) || m.BufIndex != 0 {
			t.Fatalf("datagram %d at offset %d cap %d of buffer %d, want offset %d cap %d of buffer 0",
				i, off, cap(m.Data), m.BufIndex, i*1000, len(m.Data))
		}
	}
	if rcv.Pending() {
		t.Fatal("Pending after a read that delivered everything")
	}
	if msgs[0].Buf == nil || &msgs[0].Buf[0] != base || msgs[1].Buf != nil {
		t.Fatal("ReadBatch changed the callers' Buf fields")
	}
	if s := rcv.Stats(); s.ReadCalls != 1 || s.GROBuffers != 1 {
		t.Fatalf("want one call with one GRO buffer, got %+v", s)
	}
}

func offsetIn(buf, sub []byte) int {
	for off := range len(buf) - len(sub) + 1 {
		if len(sub) > 0 && &buf[off] == &sub[0] {
			return off
		}
	}
	return -1
}

func TestGROOverflowCarriesOver(t *testing.T) {
	snd := listen(t, "udp4", "127.0.0.1:0", Options{})
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{})
	requireGSO(t, snd)
	dst := addrOf(rcv, lo4)
	first := payloadsTo(dst, append(repeat(1200, 9), 100)...)
	second := payloadsTo(dst, 600, 600, 600)
	writeAll(t, snd, first)
	writeAll(t, snd, second)
	// Two receive buffers but room for three datagrams per call: the
	// split's remainder comes out of later calls, in order, before
	// anything new is received into those buffers.
	msgs := make([]Message, 3)
	msgs[0].Buf = make([]byte, GROBufferSize)
	msgs[2].Buf = make([]byte, GROBufferSize)
	want := append(first, second...)
	var sizes []int
	var got []datagram
	if err := rcv.SetReadDeadline(deadline()); err != nil {
		t.Fatal(err)
	}
	for len(got) < len(want) {
		n, err := rcv.ReadBatch(msgs)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, n)
		for _, m := range msgs[:n] {
			got = append(got, datagram{data: bytes.Clone(m.Data), from: m.Addr})
			// Each datagram names the buffer it lies in.
			if offsetIn(msgs[m.BufIndex].Buf, m.Data) < 0 {
				t.Fatalf("datagram of %d bytes is not in buffer %d", len(m.Data), m.BufIndex)
			}
		}
		// Until the last call, the remainder waits in the buffers.
		if pending := len(got) < len(want); rcv.Pending() != pending {
			t.Fatalf("after %d of %d datagrams Pending is %v", len(got), len(want), !pending)
		}
	}
	expectSequence(t, got, want, addrOf(snd, lo4))
	if s := rcv.Stats(); s.ReadCalls != 1 || s.GROBuffers != 2 {
		t.Fatalf("want both GRO buffers from one system call, got %+v (batches %v)", s, sizes)
	}
}

func TestGROTruncatedBuffer(t *testing.T) {
	snd := listen(t, "udp4", "127.0.0.1:0", Options{})
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{})
	requireGSO(t, snd)
	writeAll(t, snd, payloadsTo(addrOf(rcv, lo4), repeat(1000, 5)...))
	// A buffer too short for the GRO buffer keeps the datagrams that fit
	// and flags the one cut in the middle.
	msgs := NewMessages(4, 2500)
	got := collect(t, rcv, msgs[:1], 3)
	for i, d := range got {
		wantLen, wantTrunc := 1000, false
		if i == 2 {
			wantLen, wantTrunc = 500, true
		}
		if len(d.data) != wantLen || d.trunc != wantTrunc || d.data[0] != byte('a'+i) {
			t.Fatalf("datagram %d: %d bytes truncated %v, want %d bytes truncated %v", i, len(d.data), d.trunc, wantLen, wantTrunc)
		}
	}
}

func TestECNCodepoints(t *testing.T) {
	cases := []struct {
		name             string
		sndNet, sndAddr  string
		rcvNet, rcvAddr  string
		dstIP, wantSrcIP netip.Addr
	}{
		{"ipv4", "udp4", "127.0.0.1:0", "udp4", "127.0.0.1:0", lo4, lo4},
		{"ipv6", "udp6", "[::1]:0", "udp6", "[::1]:0", lo6, lo6},
		{"ipv4-to-dual-stack", "udp4", "127.0.0.1:0", "udp", "[::]:0", lo4, lo4},
		{"dual-stack-to-ipv4", "udp", "[::]:0", "udp4", "127.0.0.1:0", lo4, lo4},
		{"dual-stack-ipv6", "udp", "[::]:0", "udp", "[::]:0", lo6, lo6},
	}
	codepoints := []ecn.Codepoint{ecn.NotECT, ecn.ECT0, ecn.ECT1, ecn.CE}
	for _, tc := range cases {
		for _, mode := range modes[:2] {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				snd := listen(t, tc.sndNet, tc.sndAddr, mode.opts)
				rcv := listen(t, tc.rcvNet, tc.rcvAddr, mode.opts)
				if !snd.Capabilities().ECN || !rcv.Capabilities().ECN {
					t.Fatalf("ECN not available: %s / %s", snd.Capabilities(), rcv.Capabilities())
				}
				dst := netip.AddrPortFrom(tc.dstIP, addrOf(rcv, tc.dstIP).Port())
				// Per codepoint a GSO run of three and a single datagram.
				var batch []Message
				for _, e := range codepoints {
					run := payloadsTo(dst, 700, 700, 700, 300)
					for i := range run {
						run[i].ECN = e
					}
					batch = append(batch, run...)
				}
				writeAll(t, snd, batch)
				got := collect(t, rcv, rcv.NewReadBatch(32), len(batch))
				expectSequence(t, got, batch, netip.AddrPortFrom(tc.wantSrcIP, addrOf(snd, tc.wantSrcIP).Port()))
				for i := range got {
					if got[i].ecn != batch[i].ECN {
						t.Fatalf("datagram %d: ECN %v, sent %v", i, got[i].ecn, batch[i].ECN)
					}
				}
			})
		}
	}
}

func TestPacketInfo(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no loopback interface: %v", err)
	}
	lo2 := netip.MustParseAddr("127.0.0.2")
	lo3 := netip.MustParseAddr("127.0.0.3")
	for _, mode := range modes[:2] {
		t.Run(mode.name, func(t *testing.T) {
			opts := mode.opts
			opts.PacketInfo = true
			rcv := listen(t, "udp4", "0.0.0.0:0", opts)
			snd := listen(t, "udp4", "0.0.0.0:0", opts)
			if !rcv.Capabilities().PacketInfo {
				t.Fatalf("packet info not available: %s", rcv.Capabilities())
			}
			dst := addrOf(rcv, lo4)
			sport := addrOf(snd, lo4).Port()
			// Runs from two source addresses of the wildcard socket:
			// the source must split GSO runs and reach the peer.
			batch := payloadsTo(dst, 900, 900, 900, 900, 900, 900)
			for i := range batch {
				batch[i].Local = lo2
				if i >= 3 {
					batch[i].Local = lo3
				}
			}
			writeAll(t, snd, batch)
			got := collect(t, rcv, rcv.NewReadBatch(16), len(batch))
			for i, d := range got {
				wantFrom := netip.AddrPortFrom(batch[i].Local, sport)
				if d.from != wantFrom || d.local != lo4 || !bytes.Equal(d.data, batch[i].Data) {
					t.Fatalf("datagram %d: from %v to %v, want from %v to %v", i, d.from, d.local, wantFrom, lo4)
				}
			}

			// The answer goes out from the address the request reached.
			reply := []Message{{Data: []byte("reply"), Addr: got[0].from, Local: got[0].local, IfIndex: lo.Index}}
			writeAll(t, rcv, reply)
			back := collect(t, snd, snd.NewReadBatch(4), 1)
			if back[0].from != dst || back[0].local != lo2 {
				t.Fatalf("reply from %v to %v, want from %v to %v", back[0].from, back[0].local, dst, lo2)
			}
		})
	}
	t.Run("ipv6-and-dual-stack", func(t *testing.T) {
		for _, tc := range []struct {
			rcvNet, sndNet, sndAddr string
			ip                      netip.Addr
		}{
			{"udp6", "udp6", "[::1]:0", lo6},
			{"udp", "udp4", "127.0.0.1:0", lo4},
			{"udp", "udp6", "[::1]:0", lo6},
		} {
			rcv := listen(t, tc.rcvNet, "[::]:0", Options{PacketInfo: true})
			snd := listen(t, tc.sndNet, tc.sndAddr, Options{})
			writeAll(t, snd, payloadsTo(netip.AddrPortFrom(tc.ip, addrOf(rcv, tc.ip).Port()), 10))
			msgs := rcv.NewReadBatch(4)
			if err := rcv.SetReadDeadline(deadline()); err != nil {
				t.Fatal(err)
			}
			n, err := rcv.ReadBatch(msgs)
			if err != nil || n != 1 {
				t.Fatalf("read %d: %v", n, err)
			}
			if msgs[0].Local != tc.ip || msgs[0].IfIndex != lo.Index {
				t.Fatalf("%s from %s: local %v if %d, want %v if %d", tc.rcvNet, tc.sndNet, msgs[0].Local, msgs[0].IfIndex, tc.ip, lo.Index)
			}
		}
	})
}

func TestGSOTurnedOffWhenRefused(t *testing.T) {
	snd := listen(t, "udp4", "127.0.0.1:0", Options{})
	rcv := listen(t, "udp4", "127.0.0.1:0", Options{})
	requireGSO(t, snd)
	// A socket that sends without UDP checksums cannot use GSO, which
	// needs checksum offload: the kernel refuses with EINVAL, as a device
	// without offload refuses with EIO, while single datagrams go out.
	raw, err := snd.PacketConn().(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var optErr error
	if err := raw.Control(func(fd uintptr) {
		optErr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1)
	}); err != nil || optErr != nil {
		t.Skipf("SO_NO_CHECK: %v %v", err, optErr)
	}
	dst := addrOf(rcv, lo4)
	batch := payloadsTo(dst, 1000, 1000, 1000, 1000, 400)
	writeAll(t, snd, batch)
	caps := snd.Capabilities()
	if caps.GSO || !strings.Contains(caps.GSOError, "invalid argument") {
		t.Fatalf("GSO still on after the kernel refused it: %s", caps)
	}
	second := payloadsTo(dst, 1000, 1000)
	writeAll(t, snd, second)
	if s := snd.Stats(); s.GSOSends != 0 || s.WriteDatagrams != 7 {
		t.Fatalf("stats after fallback: %+v", s)
	}
	got := collect(t, rcv, rcv.NewReadBatch(16), 7)
	expectSequence(t, got, append(batch, second...), addrOf(snd, lo4))
}

func TestWriteErrorNamesTheDatagram(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			snd := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			rcv := listen(t, "udp4", "127.0.0.1:0", mode.opts)
			dst := addrOf(rcv, lo4)
			// Larger than any IPv4 datagram: EMSGSIZE, as a PMTU probe
			// beyond the path's limit gets with DF set.
			batch := payloadsTo(dst, 100, 100, 70000, 100)
			n, err := snd.WriteBatch(batch)
			if n != 2 || !errors.Is(err, syscall.EMSGSIZE) {
				t.Fatalf("sent %d, err %v; want 2 and EMSGSIZE", n, err)
			}
			writeAll(t, snd, batch[3:])
			want := append(batch[:2:2], batch[3])
			expectSequence(t, collect(t, rcv, rcv.NewReadBatch(8), 3), want, addrOf(snd, lo4))
			if mode.name == "gso-gro" && !snd.Capabilities().GSO {
				t.Fatalf("an oversized datagram changed GSO: %s", snd.Capabilities())
			}
		})
	}
}

func TestCapabilitiesLinux(t *testing.T) {
	c := listen(t, "udp", "[::]:0", Options{})
	caps := c.Capabilities()
	if !caps.Batch || !caps.GSO || !caps.GRO || !caps.ECN || !caps.DontFragment || caps.PacketInfo {
		t.Fatalf("default capabilities on Linux: %s", caps)
	}
	if !strings.HasPrefix(caps.String(), "batch gso gro ecn df rcvbuf=") {
		t.Fatalf("String() = %q", caps.String())
	}
	// Linux reports twice the size it grants; past net.core.rmem_max
	// only with CAP_NET_ADMIN, which root has.
	if os.Geteuid() == 0 && (caps.ReceiveBuffer < 2*DefaultSocketBuffer || caps.SendBuffer < 2*DefaultSocketBuffer) {
		t.Fatalf("buffers %d/%d as root, want at least %d", caps.ReceiveBuffer, caps.SendBuffer, 2*DefaultSocketBuffer)
	}
	if caps.ReceiveBuffer == 0 || caps.SendBuffer == 0 {
		t.Fatalf("buffer sizes unknown: %s", caps)
	}

	// RFC 9000 section 14: never fragment, for IPv4 peers of the
	// dual-stack socket too.
	for _, opt := range []struct{ level, name, want int }{
		{unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE},
		{unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE},
	} {
		if got := sockopt(t, c, opt.level, opt.name); got != opt.want {
			t.Fatalf("path MTU discovery option %d = %d, want %d", opt.name, got, opt.want)
		}
	}

	small := listen(t, "udp4", "127.0.0.1:0", Options{SocketBuffer: -1, DisableGSO: true, DisableGRO: true, DisableECN: true, PacketInfo: true})
	sc := small.Capabilities()
	if sc.GSO || sc.GRO || sc.ECN || !sc.PacketInfo || !sc.Batch || sc.ReceiveBuffer >= 2*DefaultSocketBuffer {
		t.Fatalf("capabilities with options: %s", sc)
	}
	if m := small.NewReadBatch(8); len(m) != 8 || len(m[7].Buf) != DefaultMaxDatagramSize {
		t.Fatalf("read batch without GRO: %d messages, last buffer %d", len(m), len(m[7].Buf))
	}
	if m := c.NewReadBatch(8); len(m[0].Buf) != GROBufferSize || len(m[1].Buf) != GROBufferSize || m[2].Buf != nil {
		t.Fatal("read batch with GRO: want two 64 KiB buffers then output-only messages")
	}

	if got := sockopt(t, small, unix.IPPROTO_IP, unix.IP_MTU_DISCOVER); got != unix.IP_PMTUDISC_PROBE {
		t.Fatalf("IP_MTU_DISCOVER = %d", got)
	}

	p := listen(t, "udp4", "127.0.0.1:0", Options{Portable: true, PacketInfo: true})
	pc := p.Capabilities()
	if pc.Batch || pc.GSO || pc.GRO || pc.ECN || pc.PacketInfo || !pc.DontFragment || pc.ReceiveBuffer == 0 {
		t.Fatalf("portable capabilities: %s", pc)
	}
	if !strings.HasPrefix(pc.String(), "portable df rcvbuf=") {
		t.Fatalf("String() = %q", pc.String())
	}
}

func sockopt(t *testing.T, c *Conn, level, name int) int {
	t.Helper()
	raw, err := c.PacketConn().(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var optErr error
	if err := raw.Control(func(fd uintptr) { v, optErr = unix.GetsockoptInt(int(fd), level, name) }); err != nil {
		t.Fatal(err)
	}
	if optErr != nil {
		t.Fatalf("getsockopt %d/%d: %v", level, name, optErr)
	}
	return v
}
