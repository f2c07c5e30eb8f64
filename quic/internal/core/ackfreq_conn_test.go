package core

import (
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/wire"
)

// ackFreqPair returns a confirmed pair whose ends offer the ACK frequency
// extension as told.
func ackFreqPair(t *testing.T, seed uint64, client, server bool) *pair {
	t.Helper()
	ccfg, scfg := testConfigs(t, seed)
	if client {
		ccfg.AckFrequency = &AckFrequencyConfig{}
	}
	if server {
		scfg.AckFrequency = &AckFrequencyConfig{}
	}
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	return p
}

// TestAckFrequencyNegotiation: each end learns whether the other offered
// min_ack_delay; an end that did not offer it is told nothing.
func TestAckFrequencyNegotiation(t *testing.T) {
	for _, tc := range []struct{ client, server bool }{{true, true}, {true, false}, {false, true}, {false, false}} {
		p := ackFreqPair(t, 7, tc.client, tc.server)
		cs, ss := p.client.Stats().AckFrequency, p.server.Stats().AckFrequency
		if cs.Offered != tc.client || ss.Offered != tc.server {
			t.Errorf("%+v: offered %v and %v", tc, cs.Offered, ss.Offered)
		}
		if cs.PeerOffered != (tc.client && tc.server) || ss.PeerOffered != (tc.client && tc.server) {
			t.Errorf("%+v: peer offered %v and %v", tc, cs.PeerOffered, ss.PeerOffered)
		}
		if cs.FramesSent+ss.FramesSent+cs.ImmediateAcksSent+ss.ImmediateAcksSent != 0 {
			t.Errorf("%+v: frames sent during the handshake: %+v %+v", tc, cs, ss)
		}
	}
}

// TestAckFrequencyFrameErrors: the frames are unknown to an endpoint that
// did not offer the extension (RFC 9000 section 12.4), and a requested
// delay below the min_ack_delay offered is a PROTOCOL_VIOLATION (draft
// section 4).
func TestAckFrequencyFrameErrors(t *testing.T) {
	for i, tc := range []struct {
		name  string
		offer bool
		f     wire.Frame
		code  uint64
	}{
		{"ACK_FREQUENCY without the offer", false, &wire.AckFrequencyFrame{AckElicitingThreshold: 3, RequestedMaxAckDelay: 25 * time.Millisecond}, wire.CodeFrameEncodingError},
		{"IMMEDIATE_ACK without the offer", false, &wire.ImmediateAckFrame{}, wire.CodeFrameEncodingError},
		{"delay below min_ack_delay", true, &wire.AckFrequencyFrame{RequestedMaxAckDelay: 999 * time.Microsecond}, wire.CodeProtocolViolation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ackFreqPair(t, uint64(40+i), true, tc.offer)
			p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, frameBytes(t, tc.f), 0)})
			var ce *ConnError
			if !errors.As(p.server.Err(), &ce) || ce.Code != tc.code {
				t.Fatalf("server closed with %v, want %s", p.server.Err(), wire.TransportErrorName(tc.code))
			}
		})
	}
}

// TestAckFrequencyHonoured: after the client's ACK_FREQUENCY the server
// holds its ACK for ten ack-eliciting packets or 50 ms, whichever first,
// and IMMEDIATE_ACK makes it answer at once.
func TestAckFrequencyHonoured(t *testing.T) {
	p := ackFreqPair(t, 9, true, true)
	p.mustRun(func() bool {
		sp := p.server.spaces[spaceApp]
		_, pending := sp.acks.timer()
		return !pending
	}, p.now+time.Second)
	send := func(frames ...wire.Frame) {
		t.Helper()
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, frameBytes(t, frames...), 0)})
		if err := p.server.Err(); err != nil {
			t.Fatal(err)
		}
	}
	acks := &p.server.spaces[spaceApp].acks
	send(&wire.AckFrequencyFrame{SequenceNumber: 1, AckElicitingThreshold: 9, RequestedMaxAckDelay: 50 * time.Millisecond, ReorderingThreshold: 3})
	start := p.now
	if acks.due(p.now) {
		t.Fatal("ACK due at once after ACK_FREQUENCY")
	}
	if at, ok := acks.timer(); !ok || at != start+50*time.Millisecond {
		t.Fatalf("ACK timer %v %v, want the requested 50 ms", at, ok)
	}
	for range 8 {
		send(&wire.PingFrame{})
	}
	if acks.due(p.now) {
		t.Fatal("ACK due after nine ack-eliciting packets")
	}
	send(&wire.PingFrame{})
	if !acks.due(p.now) {
		t.Fatal("no ACK due after ten")
	}
	acks.onAckSent()
	send(&wire.PingFrame{}, &wire.ImmediateAckFrame{})
	if !acks.due(p.now) {
		t.Fatal("IMMEDIATE_ACK did not make an ACK due")
	}
	st := p.server.Stats().AckFrequency
	if st.PeerPacketsPerAck != 10 || st.PeerMaxAckDelay != 50*time.Millisecond || st.FramesReceived != 1 || st.ImmediateAcksReceived != 1 {
		t.Errorf("stats %+v", st)
	}
}

// TestAckFrequencyRequestEndToEnd: a request the server queues goes out in
// a 1-RTT packet and the client applies it; the server's probe timeout
// uses a larger requested max_ack_delay as soon as it is in flight, and a
// smaller one only once acknowledged (draft section 7).
func TestAckFrequencyRequestEndToEnd(t *testing.T) {
	p := ackFreqPair(t, 11, true, true)
	s := &p.server.ackFreq.send
	pto := func() time.Duration { return p.server.sender.RTT().MaxAckDelay() }
	if !s.on || pto() != 25*time.Millisecond {
		t.Fatalf("sender on %v, max_ack_delay %v", s.on, pto())
	}
	request := func(perAck int, delay time.Duration) {
		t.Helper()
		sent := s.framesSent
		s.update(p.now, time.Millisecond, ackFreqRequest{perAck: perAck, delay: delay, reorder: 3})
		p.mustRun(func() bool { return s.framesSent > sent }, p.now+time.Second)
	}
	request(64, 60*time.Millisecond)
	if pto() != 60*time.Millisecond {
		t.Fatalf("max_ack_delay with 60 ms in flight: %v", pto())
	}
	p.mustRun(func() bool { return len(s.inFlight) == 0 }, p.now+time.Second)
	if st := p.client.Stats().AckFrequency; st.PeerPacketsPerAck != 64 || st.PeerMaxAckDelay != 60*time.Millisecond {
		t.Fatalf("client follows %+v", st)
	}
	request(2, 10*time.Millisecond)
	if pto() != 60*time.Millisecond {
		t.Fatalf("max_ack_delay with 10 ms in flight: %v, want 60 ms until acknowledged", pto())
	}
	p.mustRun(func() bool { return len(s.inFlight) == 0 }, p.now+time.Second)
	if pto() != 10*time.Millisecond || p.client.Stats().AckFrequency.PeerMaxAckDelay != 10*time.Millisecond {
		t.Fatalf("max_ack_delay once acknowledged %v, client %+v", pto(), p.client.Stats().AckFrequency)
	}
}

// FuzzAckFrequencyFrames feeds authenticated 1-RTT payloads to both ends
// of a pair that negotiated the extension, so that ACK_FREQUENCY and
// IMMEDIATE_ACK reach their handlers: errors close, nothing panics or
// spins.
func FuzzAckFrequencyFrames(f *testing.F) {
	seed := func(frames ...wire.Frame) []byte {
		var b []byte
		for _, fr := range frames {
			b, _ = fr.Append(b)
		}
		return b
	}
	f.Add(seed(&wire.AckFrequencyFrame{SequenceNumber: 1, AckElicitingThreshold: 9, RequestedMaxAckDelay: 50 * time.Millisecond, ReorderingThreshold: 3}))
	f.Add(seed(&wire.AckFrequencyFrame{AckElicitingThreshold: 1 << 40, RequestedMaxAckDelay: time.Millisecond}, &wire.ImmediateAckFrame{}))
	f.Add(seed(&wire.ImmediateAckFrame{}, &wire.PingFrame{}))
	f.Add([]byte{0x40, 0xaf, 0x01, 0x02})
	f.Fuzz(func(t *testing.T, payload []byte) {
		p := ackFreqPair(t, 9, true, true)
		p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, payload, 0)})
		p.client.HandleDatagram(p.now, Datagram{Addr: serverAddr, Data: seal1RTT(t, p.now, p.server, payload, 0)})
		for range 50 {
			if !p.step() {
				break
			}
		}
	})
}

// TestAckFrequencyImmediateAckOnProbe: while a request thins the peer's
// ACKs, a probe carries IMMEDIATE_ACK (draft section 7), and the peer
// answers it at once. The server asks for one ACK per window (AcksPerRTT
// 1), so that its small window on this short path still thins.
func TestAckFrequencyImmediateAckOnProbe(t *testing.T) {
	ccfg, scfg := testConfigs(t, 13)
	ccfg.AckFrequency, scfg.AckFrequency = &AckFrequencyConfig{}, &AckFrequencyConfig{AcksPerRTT: 1}
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	s := &p.server.ackFreq.send
	// The first request, past the slow start condition.
	s.update(p.now, time.Millisecond, ackFreqRequest{perAck: 64, delay: 60 * time.Millisecond, reorder: 3})
	p.mustRun(func() bool { return s.framesSent == 1 && len(s.inFlight) == 0 }, p.now+time.Second)
	if !s.thins() {
		t.Fatalf("request %+v does not thin", s.want)
	}
	// The next request is lost, and what probes it.
	p.drop = func(toServer bool, _ int, _ []byte) bool { return !toServer }
	s.update(p.now, time.Millisecond, ackFreqRequest{perAck: 8, delay: 60 * time.Millisecond, reorder: 3})
	p.mustRun(func() bool { return p.server.Stats().ProbesSent > 0 }, p.now+5*time.Second)
	// The probe is built at the next turn; the IMMEDIATE_ACK of the
	// packet sent after the idle period went before.
	before := s.immediateSent
	p.mustRun(func() bool { return s.immediateSent > before }, p.now+time.Millisecond)
	p.drop = nil
	p.mustRun(func() bool { return p.client.Stats().AckFrequency.ImmediateAcksReceived > 0 }, p.now+5*time.Second)
	if !s.thins() {
		t.Fatalf("request %+v does not thin", s.want)
	}
}
