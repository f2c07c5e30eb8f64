package core

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestResetStream: the reader sees the writer's code, and both ends forget
// the stream.
func TestResetStream(t *testing.T) {
	p := confirmedPair(t, 90)
	id, _ := p.client.OpenStream(p.now, true)
	if _, err := p.client.StreamWrite(id, payload(50_000, 1)); err != nil {
		t.Fatal(err)
	}
	p.mustRun(func() bool { return p.server.StreamReadable(id) > 0 }, p.now+time.Second)
	if err := p.client.ResetStream(id, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := p.client.StreamWrite(id, []byte("x")); !errors.Is(err, ErrWriteClosed) {
		t.Fatalf("write after reset: %v", err)
	}
	var se *StreamError
	p.mustRun(func() bool {
		_, err := p.server.StreamRead(p.now, id, make([]byte, 100))
		return errors.As(err, &se)
	}, p.now+time.Second)
	if se.Code != 7 || !se.Remote || se.StreamID != id {
		t.Fatalf("stream error %+v", se)
	}
	// The server still has its sending part open: close it.
	if err := p.server.CloseWrite(id); err != nil {
		t.Fatal(err)
	}
	var got []byte
	p.mustRun(func() bool { return readAll(t, p.now, p.client, id, &got) }, p.now+time.Second)
	p.mustRun(func() bool { return len(p.client.streams.m) == 0 && len(p.server.streams.m) == 0 }, p.now+time.Second)
	// Flow control credit of the reset data came back to the server.
	if p.server.flow.consumed != p.server.flow.received {
		t.Errorf("server consumed %d of %d bytes received", p.server.flow.consumed, p.server.flow.received)
	}
}

// TestStopSending: STOP_SENDING makes the writer fail with the reader's
// code and answer with RESET_STREAM (RFC 9000 section 3.5).
func TestStopSending(t *testing.T) {
	p := confirmedPair(t, 91)
	id, _ := p.client.OpenStream(p.now, false)
	w := &writer{id: id, data: payload(4<<20, 2)}
	p.clientApp = func(now time.Duration, c *Conn) {
		if w.off < len(w.data) {
			n, err := c.StreamWrite(id, w.data[w.off:])
			if err == nil {
				w.off += n
			}
		}
	}
	p.mustRun(func() bool { return p.server.StreamReadable(id) > 0 }, p.now+time.Second)
	if err := p.server.StopSending(p.now, id, 9); err != nil {
		t.Fatal(err)
	}
	var se *StreamError
	p.mustRun(func() bool {
		_, err := p.client.StreamWrite(id, []byte("x"))
		return errors.As(err, &se)
	}, p.now+time.Second)
	if se.Code != 9 || !se.Remote {
		t.Fatalf("write error %+v", se)
	}
	p.clientApp = nil
	p.mustRun(func() bool { return len(p.client.streams.m) == 0 && len(p.server.streams.m) == 0 }, p.now+time.Second)
	p.collectEvents()
	if !hasEvent(p.clientEvents, EventStreamWritable) {
		t.Error("no EventStreamWritable to wake the writer")
	}
}

// TestSmallWindows transfers with tiny flow control windows: the sender
// is blocked again and again, says so, and every byte arrives.
func TestSmallWindows(t *testing.T) {
	ccfg, scfg := testConfigs(t, 92)
	scfg.InitialStreamReceiveWindow, scfg.MaxStreamReceiveWindow = 5000, 5000
	scfg.InitialConnReceiveWindow, scfg.MaxConnReceiveWindow = 3000, 5000
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	id, _ := p.client.OpenStream(p.now, true)
	data := payload(200_000, 4)
	w := &writer{id: id, data: data}
	var got []byte
	done := false
	p.clientApp = func(now time.Duration, c *Conn) { w.pump(t, c) }
	p.serverApp = func(now time.Duration, c *Conn) {
		if hasEvent(p.serverEvents, EventStreamOpened) && !done {
			done = readAll(t, now, c, id, &got)
		}
	}
	p.mustRun(func() bool { return done }, p.now+30*time.Second)
	if !bytes.Equal(got, data) {
		t.Fatal("data differs")
	}
	if p.client.flow.blockedAt == 0 {
		t.Error("the client never reported DATA_BLOCKED")
	}
}

// TestStopSendingAfterAllData: in the Data Recvd state (RFC 9000 section
// 3.2), StopSending drops the unread data, releases its flow control
// credit and frees the stream, so that the peer may open another; no
// STOP_SENDING goes out, since the peer has nothing left to send (section
// 3.5 asks for one in the Recv and Size Known states).
func TestStopSendingAfterAllData(t *testing.T) {
	ccfg, scfg := testConfigs(t, 93)
	scfg.MaxIncomingStreamsUni = 1
	p := newPair(t, ccfg, scfg, 5*time.Millisecond)
	p.mustRun(p.confirmed, 5*time.Second)
	stops := 0
	p.client.debugf = func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "STOP_SENDING") {
			stops++
		}
	}
	id, err := p.client.OpenStream(p.now, false)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := p.client.StreamWrite(id, payload(10_000, 5)); n != 10_000 || err != nil {
		t.Fatalf("StreamWrite: %d, %v", n, err)
	}
	if err := p.client.CloseWrite(id); err != nil {
		t.Fatal(err)
	}
	p.mustRun(func() bool {
		s := p.server.streams.m[id]
		return s != nil && s.recv.allReceived()
	}, p.now+time.Second)
	if _, err := p.client.OpenStream(p.now, false); !errors.Is(err, ErrStreamLimit) {
		t.Fatalf("second stream before the first ended: %v", err)
	}
	if err := p.server.StopSending(p.now, id, 5); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.server.streams.m[id]; ok {
		t.Fatal("the server kept the stream")
	}
	if _, err := p.server.StreamRead(p.now, id, make([]byte, 100)); !errors.Is(err, ErrUnknownStream) {
		t.Fatalf("read after StopSending: %v", err)
	}
	if p.server.flow.consumed != p.server.flow.received {
		t.Errorf("server consumed %d of %d bytes received", p.server.flow.consumed, p.server.flow.received)
	}
	p.mustRun(func() bool {
		_, err := p.client.OpenStream(p.now, false)
		return err == nil
	}, p.now+time.Second)
	if stops != 0 {
		t.Errorf("the client received %d STOP_SENDING frames for a complete stream", stops)
	}
}

// TestStopSendingSizeKnown: with the final size known but data missing
// (Size Known), StopSending sends STOP_SENDING (RFC 9000 section 3.5), and
// the stream is freed once the peer answers with RESET_STREAM.
func TestStopSendingSizeKnown(t *testing.T) {
	p := confirmedPair(t, 94)
	// The losses below count datagrams: path MTU probes must be over.
	p.mustRun(p.pmtuSettled, p.now+time.Second)
	id, _ := p.client.OpenStream(p.now, false)
	if _, err := p.client.StreamWrite(id, payload(3000, 6)); err != nil {
		t.Fatal(err)
	}
	if err := p.client.CloseWrite(id); err != nil {
		t.Fatal(err)
	}
	// The data takes three datagrams: lose the first and every
	// retransmission, so that the FIN arrives after a gap that stays.
	data := 0
	p.drop = func(toServer bool, _ int, d []byte) bool {
		if !toServer || len(d) < 300 {
			return false
		}
		data++
		return data == 1 || data > 3
	}
	p.mustRun(func() bool {
		s := p.server.streams.m[id]
		return s != nil && s.recv.hasFinal && !s.recv.allReceived()
	}, p.now+time.Second)
	stops := 0
	p.client.debugf = func(format string, args ...any) {
		if strings.Contains(fmt.Sprintf(format, args...), "STOP_SENDING") {
			stops++
		}
	}
	if err := p.server.StopSending(p.now, id, 6); err != nil {
		t.Fatal(err)
	}
	p.drop = nil
	p.mustRun(func() bool { return len(p.server.streams.m) == 0 && len(p.client.streams.m) == 0 }, p.now+time.Second)
	if stops == 0 {
		t.Error("no STOP_SENDING in the Size Known state")
	}
	if p.server.flow.consumed != p.server.flow.received {
		t.Errorf("server consumed %d of %d bytes received", p.server.flow.consumed, p.server.flow.received)
	}
}
