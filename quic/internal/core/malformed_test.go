package core

import (
	"errors"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
	"github.com/satquic/satquic/quic/internal/wire"
)

// seal1RTT protects payload as a 1-RTT packet from the sending Conn to its
// peer, with a 4-byte packet number taken from the sender's space and the
// first-byte bits in extra (reserved bits, for the tests that need them).
func seal1RTT(t testing.TB, now time.Duration, from *Conn, payload []byte, extra byte) []byte {
	t.Helper()
	sp := from.spaces[spaceApp]
	pn := sp.nextPN
	sp.nextPN++
	h := wire.ShortHeader{DstConnID: from.cids.dcid(), PacketNumber: pn, PacketNumberLen: 4}
	b, err := wire.AppendShortHeader(nil, &h)
	if err != nil {
		t.Fatal(err)
	}
	b[0] |= extra
	pnOffset := len(b) - 4
	b = append(b, payload...)
	out, err := from.appWrite.Protect(b, pnOffset, pn)
	if err != nil {
		t.Fatal(err)
	}
	// Recorded as sent, so that the peer's acknowledgement is valid.
	sp.sent.push(pn)
	err = from.sender.OnPacketSent(now, recovery.SentPacket{Space: spaceApp, Number: pn, Bytes: len(out), AckEliciting: true, InFlight: true})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// frameBytes encodes frames into a payload.
func frameBytes(t testing.TB, frames ...wire.Frame) []byte {
	t.Helper()
	var b []byte
	for _, f := range frames {
		var err error
		if b, err = f.Append(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// confirmedPair returns a pair whose handshake is confirmed.
func confirmedPair(t testing.TB, seed uint64) *pair {
	ccfg, scfg := testConfigs(t, seed)
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	return p
}

// TestMalformedFrames sends authenticated 1-RTT packets that break the
// rules to a server and checks the CONNECTION_CLOSE code it answers with,
// as the client receives it.
func TestMalformedFrames(t *testing.T) {
	cases := []struct {
		name    string
		payload func(t testing.TB) [][]byte // one payload per packet
		extra   byte
		code    uint64
	}{
		{"unknown frame type", raw([]byte{0x21, 0, 0}), 0, wire.CodeFrameEncodingError},
		{"truncated STREAM", raw([]byte{0x0e, 0x00, 0x05, 'a'}), 0, wire.CodeFrameEncodingError},
		{"frame type not minimal", raw([]byte{0x40, 0x01}), 0, wire.CodeProtocolViolation},
		{"no frames", raw(nil), 0, wire.CodeProtocolViolation},
		{"reserved bits", raw([]byte{0x01, 0, 0}), 0x18, wire.CodeProtocolViolation},
		{"STREAM on server's uni stream", frames(&wire.StreamFrame{StreamID: 3, Data: []byte("x"), DataLenPresent: true}), 0, wire.CodeStreamStateError},
		{"STREAM on unopened server bidi stream", frames(&wire.StreamFrame{StreamID: 1, Data: []byte("x"), DataLenPresent: true}), 0, wire.CodeStreamStateError},
		{"STREAM beyond stream limit", frames(&wire.StreamFrame{StreamID: 4 * 100, Data: []byte("x"), DataLenPresent: true}), 0, wire.CodeStreamLimitError},
		{"STREAM beyond flow control", frames(&wire.StreamFrame{StreamID: 0, Offset: DefaultInitialStreamReceiveWindow, Data: []byte("x"), DataLenPresent: true}), 0, wire.CodeFlowControlError},
		{"connection flow control", multi(
			&wire.StreamFrame{StreamID: 0, Offset: DefaultInitialStreamReceiveWindow - 1, Data: []byte("x"), DataLenPresent: true},
			&wire.StreamFrame{StreamID: 4, Offset: DefaultInitialConnReceiveWindow - DefaultInitialStreamReceiveWindow, Data: []byte("x"), DataLenPresent: true},
		), 0, wire.CodeFlowControlError},
		{"final size changed", multi(
			&wire.StreamFrame{StreamID: 0, Data: []byte("0123456789"), Fin: true, DataLenPresent: true},
			&wire.StreamFrame{StreamID: 0, Data: []byte("01234"), Fin: true, DataLenPresent: true},
		), 0, wire.CodeFinalSizeError},
		{"data beyond final size", multi(
			&wire.StreamFrame{StreamID: 0, Data: []byte("01234"), Fin: true, DataLenPresent: true},
			&wire.StreamFrame{StreamID: 0, Offset: 5, Data: []byte("5"), DataLenPresent: true},
		), 0, wire.CodeFinalSizeError},
		{"RESET_STREAM below received data", multi(
			&wire.StreamFrame{StreamID: 0, Data: []byte("0123456789"), DataLenPresent: true},
			&wire.ResetStreamFrame{StreamID: 0, ErrorCode: 1, FinalSize: 4},
		), 0, wire.CodeFinalSizeError},
		{"RESET_STREAM on server's uni stream", frames(&wire.ResetStreamFrame{StreamID: 3, FinalSize: 0}), 0, wire.CodeStreamStateError},
		{"MAX_STREAM_DATA on client's uni stream", frames(&wire.MaxStreamDataFrame{StreamID: 2, Maximum: 100}), 0, wire.CodeStreamStateError},
		{"STOP_SENDING on unopened server stream", frames(&wire.StopSendingFrame{StreamID: 1, ErrorCode: 1}), 0, wire.CodeStreamStateError},
		{"ACK of unsent packet", frames(&wire.AckFrame{Ranges: []wire.AckRange{{Smallest: 1000, Largest: 1000}}}), 0, wire.CodeProtocolViolation},
		{"HANDSHAKE_DONE from client", frames(&wire.HandshakeDoneFrame{}), 0, wire.CodeProtocolViolation},
		{"NEW_TOKEN from client", frames(&wire.NewTokenFrame{Token: []byte("t")}), 0, wire.CodeProtocolViolation},
		{"DATAGRAM not negotiated", frames(&wire.DatagramFrame{Data: []byte("d")}), 0, wire.CodeProtocolViolation},
		// A KeyUpdate message, which QUIC forbids (RFC 9001 section 6),
		// reaches a server whose TLS is done: unexpected_message.
		{"CRYPTO after the handshake", frames(&wire.CryptoFrame{Data: []byte{24, 0, 0, 1, 0}}), 0, wire.CryptoErrorCode(10)},
		{"CRYPTO buffer exceeded", frames(&wire.CryptoFrame{Offset: 1 << 20, Data: []byte("c")}), 0, wire.CodeCryptoBufferExceeded},
		{"RETIRE_CONNECTION_ID never issued", frames(&wire.RetireConnectionIDFrame{SequenceNumber: 100}), 0, wire.CodeProtocolViolation},
		{"too many connection IDs", newConnIDs(5), 0, wire.CodeConnectionIDLimitError},
		// The client issued sequence number 1 after the handshake.
		{"connection ID reissued differently", frames(&wire.NewConnectionIDFrame{SequenceNumber: 1, ConnectionID: cid(99)}), 0, wire.CodeProtocolViolation},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := confirmedPair(t, uint64(100+i))
			for _, pl := range tc.payload(t) {
				p.server.HandleDatagram(p.now, Datagram{Addr: clientAddr, Data: seal1RTT(t, p.now, p.client, pl, tc.extra)})
			}
			var ce *ConnError
			if !errors.As(p.server.Err(), &ce) || ce.Code != tc.code || ce.Remote {
				t.Fatalf("server closed with %v, want local code %s", p.server.Err(), wire.TransportErrorName(tc.code))
			}
			// The client learns the code from CONNECTION_CLOSE.
			p.drop = nil
			p.mustRun(func() bool { return p.client.Err() != nil }, p.now+time.Second)
			if !errors.As(p.client.Err(), &ce) || ce.Code != tc.code || !ce.Remote {
				t.Fatalf("client saw %v, want remote code %s", p.client.Err(), wire.TransportErrorName(tc.code))
			}
			// Both ends finish their closing and draining periods.
			p.mustRun(func() bool { return p.client.Closed() && p.server.Closed() }, p.now+10*time.Second)
		})
	}
}

func raw(b []byte) func(testing.TB) [][]byte {
	return func(testing.TB) [][]byte { return [][]byte{b} }
}

func frames(fs ...wire.Frame) func(testing.TB) [][]byte {
	return func(t testing.TB) [][]byte { return [][]byte{frameBytes(t, fs...)} }
}

// multi sends each frame in its own packet.
func multi(fs ...wire.Frame) func(testing.TB) [][]byte {
	return func(t testing.TB) [][]byte {
		var out [][]byte
		for _, f := range fs {
			out = append(out, frameBytes(t, f))
		}
		return out
	}
}

func cid(b byte) wire.ConnectionID {
	id, _ := wire.NewConnectionID([]byte{b, b, b, b, b, b, b, b})
	return id
}

// newConnIDs issues n more connection IDs to the server, which holds four
// of the client's already (the handshake's and three issued after it), up
// to its active_connection_id_limit of 4.
func newConnIDs(n int) func(testing.TB) [][]byte {
	return func(t testing.TB) [][]byte {
		var out [][]byte
		for i := 1; i <= n; i++ {
			f := &wire.NewConnectionIDFrame{SequenceNumber: uint64(i) + 100, ConnectionID: cid(byte(i))}
			f.StatelessResetToken[0] = byte(i)
			out = append(out, frameBytes(t, f))
		}
		return out
	}
}
