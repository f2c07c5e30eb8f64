package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// TestHeldHandshakePackets: the server's Handshake packet overtakes the
// Initial that carries the start of its ServerHello. The client holds it
// until the Initial yields the Handshake keys, then completes at the very
// arrival of that Initial, and nothing is retransmitted (RFC 9001 section
// 5.7).
func TestHeldHandshakePackets(t *testing.T) {
	ccfg, scfg := testConfigs(t, 70)
	const delay, late = 5 * time.Millisecond, time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	// The server's first datagram (Initial) arrives 1 ms late, after its
	// second (the end of the Initial data and the Handshake packet).
	p.extraDelay = func(toServer bool, n int, _ []byte) time.Duration {
		if !toServer && n == 0 {
			return late
		}
		return 0
	}
	var completedAt time.Duration
	p.clientApp = func(now time.Duration, c *Conn) {
		if c.HandshakeComplete() && completedAt == 0 {
			completedAt = p.now
		}
	}
	p.mustRun(p.confirmed, 5*time.Second)
	// The client's two Initial datagrams arrive at 5 ms; the server's
	// flight leaves then and its first datagram arrives at 11 ms.
	if want := 2*delay + late; completedAt != want {
		t.Errorf("client completed at %v, want %v", completedAt, want)
	}
	cs, ss := p.client.Stats(), p.server.Stats()
	if cs.PacketsBuffered != 1 || cs.PacketsDropped != 0 {
		t.Errorf("client held %d and dropped %d packets, want 1 and 0", cs.PacketsBuffered, cs.PacketsDropped)
	}
	if ss.PacketsLost != 0 || ss.Recovery.PTOs != 0 || cs.Recovery.PTOs != 0 {
		t.Errorf("server lost %d packets, PTOs server %d client %d: want none", ss.PacketsLost, ss.Recovery.PTOs, cs.Recovery.PTOs)
	}
}

// TestHeldOneRTTPackets: the client's 1-RTT stream data overtakes the
// datagram with its Finished. The server cannot process 1-RTT packets
// before its handshake completes (RFC 9001 section 5.7); it holds them
// and delivers the data the moment the Finished arrives.
func TestHeldOneRTTPackets(t *testing.T) {
	ccfg, scfg := testConfigs(t, 71)
	const delay, late = 5 * time.Millisecond, 3 * time.Millisecond
	p := newPair(t, ccfg, scfg, delay)
	finished := -1
	p.extraDelay = func(toServer bool, n int, d []byte) time.Duration {
		if toServer && finished < 0 && hasPacketType(d, wire.PacketTypeHandshake) {
			finished = n
			return late
		}
		return 0
	}
	data := payload(5000, 3)
	var id uint64
	opened, written := false, 0
	p.clientApp = func(now time.Duration, c *Conn) {
		if !c.HandshakeComplete() {
			return
		}
		if !opened {
			var err error
			if id, err = c.OpenStream(now, false); err != nil {
				t.Fatalf("OpenStream: %v", err)
			}
			opened = true
		}
		if written < len(data) {
			n, err := c.StreamWrite(id, data[written:])
			if err != nil {
				t.Fatal(err)
			}
			if written += n; written == len(data) {
				if err := c.CloseWrite(id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	var got []byte
	var readAt time.Duration
	eof := false
	p.serverApp = func(now time.Duration, c *Conn) {
		if !eof && c.StreamReadable(id) > 0 && readAt == 0 {
			readAt = p.now
		}
		if !eof && c.HandshakeComplete() {
			if _, err := c.streams.get(id); err == nil {
				eof = readAll(t, now, c, id, &got)
			}
		}
	}
	p.mustRun(func() bool { return eof }, 5*time.Second)
	if string(got) != string(data) {
		t.Fatalf("server read %d bytes, want %d", len(got), len(data))
	}
	// The client completes at 10 ms and sends at once; the Finished
	// arrives at 18 ms, behind 1-RTT packets that arrived at 15 ms.
	if want := 3*delay + late; readAt != want {
		t.Errorf("server read the first bytes at %v, want %v", readAt, want)
	}
	cs, ss := p.client.Stats(), p.server.Stats()
	if ss.PacketsBuffered == 0 || ss.PacketsDropped != 0 {
		t.Errorf("server held %d and dropped %d packets, want some and 0", ss.PacketsBuffered, ss.PacketsDropped)
	}
	if cs.PacketsLost != 0 || cs.Recovery.PTOs != 0 {
		t.Errorf("client lost %d packets, %d PTOs: want none", cs.PacketsLost, cs.Recovery.PTOs)
	}
}

// TestServerAcksFinished: the server acknowledges the Handshake packet
// carrying the client's Finished in the datagram that carries
// HANDSHAKE_DONE, then discards its Handshake keys.
func TestServerAcksFinished(t *testing.T) {
	ccfg, scfg := testConfigs(t, 72)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	var hsAcks int
	p.client.debugf = func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "recv handshake frame ACK") {
			hsAcks++
		}
	}
	var doneDatagram []byte
	p.drop = func(toServer bool, _ int, d []byte) bool {
		if !toServer && doneDatagram == nil && p.server.HandshakeConfirmed() {
			doneDatagram = d
		}
		return false
	}
	p.mustRun(p.confirmed, 5*time.Second)
	if hsAcks != 1 {
		t.Errorf("client received %d Handshake ACK frames, want 1", hsAcks)
	}
	if !hasPacketType(doneDatagram, wire.PacketTypeHandshake) || !hasPacketType(doneDatagram, wire.PacketType1RTT) {
		t.Errorf("the server's first datagram after confirmation does not coalesce a Handshake ACK with 1-RTT")
	}
	if !p.server.spaces[spaceHandshake].discarded || p.server.hsDiscardPending {
		t.Error("server kept its Handshake keys")
	}
	if st := p.client.Stats(); st.Recovery.PTOs != 0 {
		t.Errorf("client PTOs %d, want 0", st.Recovery.PTOs)
	}
}

// TestHeldPacketBounds: the queue of packets waiting for keys is bounded
// in packets and bytes, and emptied when the handshake is confirmed.
func TestHeldPacketBounds(t *testing.T) {
	ccfg, _ := testConfigs(t, 73)
	c, err := NewClientConn(ccfg, 0, serverAddr)
	if err != nil {
		t.Fatal(err)
	}
	pkt := make([]byte, 1000)
	for range maxUndecryptablePackets + 10 {
		c.hold(0, pkt, wire.PacketTypeHandshake)
	}
	q := &c.undecryptable
	if len(q.pkts) > maxUndecryptablePackets || q.bytes > maxUndecryptableBytes || q.bytes != 1000*len(q.pkts) {
		t.Fatalf("held %d packets, %d bytes", len(q.pkts), q.bytes)
	}
	if c.hold(0, make([]byte, maxUndecryptableBytes+1), wire.PacketType1RTT) {
		t.Fatal("held a packet beyond the byte bound")
	}
	// Garbage with the keys present is dropped, never a panic.
	c.spaces[spaceHandshake].read = c.spaces[spaceInitial].read
	c.processHeld(0)
	if len(q.pkts) != 0 || q.bytes != 0 {
		t.Fatalf("%d packets, %d bytes left after their keys arrived", len(q.pkts), q.bytes)
	}
}

// hasPacketType reports whether a datagram holds a packet of type pt.
func hasPacketType(d []byte, pt wire.PacketType) bool {
	for len(d) > 0 {
		if !wire.IsLongHeader(d[0]) {
			return pt == wire.PacketType1RTT
		}
		h, pnOff, err := wire.ParseLongHeader(d)
		if err != nil {
			return false
		}
		if h.Type == pt {
			return true
		}
		if h.Type == wire.PacketTypeRetry {
			return false
		}
		d = d[pnOff+int(h.Length):]
	}
	return false
}
