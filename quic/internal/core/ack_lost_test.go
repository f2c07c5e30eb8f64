package core

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/satquic/satquic/quic/internal/recovery"
)

// sentRecord is a packet a Conn sent or declared lost, as its debug
// lines report it.
type sentRecord struct {
	at     time.Duration
	lost   bool
	space  recovery.Space
	pn     uint64
	frames []sentFrame
}

func (r *sentRecord) has(k frameKind) bool {
	return slices.ContainsFunc(r.frames, func(f sentFrame) bool { return f.kind == k })
}

// ackLargest is the Largest Acknowledged of the packet's ACK frame.
func (r *sentRecord) ackLargest() (uint64, bool) {
	for _, f := range r.frames {
		if f.kind == fkAck {
			return f.id, true
		}
	}
	return 0, false
}

// recordPackets appends every packet c sends or declares lost to *log.
func recordPackets(c *Conn, log *[]sentRecord) {
	c.debugf = func(format string, args ...any) {
		var lost bool
		switch format {
		case "%v sent %v pn %d size %d frames %v":
		case "%v lost %v pn %d frames %v":
			lost = true
		default:
			return
		}
		frames := args[len(args)-1].([]sentFrame)
		*log = append(*log, sentRecord{
			at: args[0].(time.Duration), lost: lost,
			space: args[1].(recovery.Space), pn: args[2].(uint64),
			frames: slices.Clone(frames),
		})
	}
}

// The ACK frames of the client's Handshake flight are lost: its probe of
// the Handshake space carries an ACK again, or the server would only learn
// that its flight arrived from its own probe timeout (RFC 9000 section
// 13.3).
func TestHandshakeProbeCarriesAck(t *testing.T) {
	ccfg, scfg := testConfigs(t, 1301)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	var log []sentRecord
	recordPackets(p.client, &log)
	seen := 0
	dropUntil := time.Duration(-1)
	dropped := 0
	p.drop = func(toServer bool, _ int, _ []byte) bool {
		if !toServer {
			return false
		}
		hs := false
		for _, r := range log[seen:] {
			hs = hs || (!r.lost && r.space == spaceHandshake)
		}
		seen = len(log)
		if hs && dropUntil < 0 {
			// The whole flight goes within one delay.
			dropUntil = p.now + p.delay
		}
		if hs && p.now < dropUntil {
			dropped++
			return true
		}
		return false
	}
	p.mustRun(p.confirmed, 5*time.Second)
	if dropped == 0 {
		t.Fatal("no Handshake datagram of the client was dropped")
	}
	var probe *sentRecord
	for i := range log {
		r := &log[i]
		if !r.lost && r.space == spaceHandshake && r.at >= dropUntil && r.has(fkCrypto) {
			probe = r
			break
		}
	}
	if probe == nil {
		t.Fatal("the client never sent its Finished again")
	}
	if !probe.has(fkAck) {
		t.Errorf("the client's Handshake probe at %v carries %v, no ACK frame", probe.at, probe.frames)
	}
	if st := p.server.Stats(); st.Recovery.PTOs != 0 {
		t.Errorf("the server needed %d probe timeouts to learn its flight arrived", st.Recovery.PTOs)
	}
}

// A 1-RTT packet of the server carrying the only ACK frame of the client's
// request is lost: once the server declares it lost, the acknowledgement
// goes out again with the data it resends, before the client's probe
// timeout makes it send its request again.
func TestLostAckIsSentAgain(t *testing.T) {
	ccfg, scfg := testConfigs(t, 1302)
	p := newPair(t, ccfg, scfg, 10*time.Millisecond)
	p.mustRun(p.confirmed, time.Second)
	p.mustRun(func() bool { return p.client.Stats().BytesInFlight == 0 && p.server.Stats().BytesInFlight == 0 }, 2*time.Second)
	before := p.client.Stats()
	var log []sentRecord
	recordPackets(p.server, &log)

	id, err := p.client.OpenStream(p.now, true)
	if err != nil {
		t.Fatal(err)
	}
	request := payload(100, 3)
	if n, err := p.client.StreamWrite(id, request); err != nil || n != len(request) {
		t.Fatalf("wrote %d: %v", n, err)
	}
	if err := p.client.CloseWrite(id); err != nil {
		t.Fatal(err)
	}
	response := payload(8000, 4)
	var got, answered []byte
	p.serverApp = func(now time.Duration, c *Conn) {
		if answered != nil {
			return
		}
		if _, err := c.StreamRead(now, id, nil); errors.Is(err, ErrUnknownStream) {
			return // not opened yet
		}
		if readAll(t, now, c, id, &got) {
			answered = response
			if n, err := c.StreamWrite(id, response); err != nil || n != len(response) {
				t.Fatalf("server wrote %d: %v", n, err)
			}
			if err := c.CloseWrite(id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Drop the first 1-RTT packet of the server that carries an ACK frame.
	var lostAck *sentRecord
	seen := 0
	p.drop = func(toServer bool, _ int, _ []byte) bool {
		if toServer {
			return false
		}
		defer func() { seen = len(log) }()
		for i := range log[seen:] {
			r := &log[seen+i]
			if lostAck == nil && !r.lost && r.space == spaceApp && r.has(fkAck) {
				lostAck = r
				return true
			}
		}
		return false
	}
	var resp []byte
	p.mustRun(func() bool { return readAll(t, p.now, p.client, id, &resp) }, p.now+5*time.Second)
	p.mustRun(func() bool { return p.client.Stats().BytesInFlight == 0 }, p.now+5*time.Second)
	if lostAck == nil {
		t.Fatal("the server sent no 1-RTT ACK frame")
	}
	largest, _ := lostAck.ackLargest()
	declared := slices.IndexFunc(log, func(r sentRecord) bool { return r.lost && r.pn == lostAck.pn && r.space == spaceApp })
	if declared < 0 {
		t.Fatalf("the server never declared packet %d with the ACK frame lost", lostAck.pn)
	}
	var again *sentRecord
	for i := declared + 1; i < len(log); i++ {
		if l, ok := log[i].ackLargest(); ok && !log[i].lost && log[i].space == spaceApp && l >= largest {
			again = &log[i]
			break
		}
	}
	if again == nil {
		t.Fatalf("no ACK frame reporting packet %d after its ACK was lost", largest)
	}
	if d := again.at - log[declared].at; d != 0 {
		t.Errorf("the ACK went out again %v after the loss, not with the resent data", d)
	}
	after := p.client.Stats()
	if n := after.Recovery.PTOs - before.Recovery.PTOs; n != 0 {
		t.Errorf("the client had %d probe timeouts waiting for the acknowledgement", n)
	}
	if n := after.PacketsRetransmitted - before.PacketsRetransmitted; n != 0 {
		t.Errorf("the client sent %d packets again", n)
	}
	if !slices.Equal(resp, response) {
		t.Error("response corrupted")
	}
}

// onAckLost repeats an ACK frame's information only when no later ACK
// frame went out and the peer has not acknowledged one covering it.
func TestAckLostRepeatsOnlyTheNewest(t *testing.T) {
	var a ackState
	a.onPacket(0, 5, true, appPolicy)
	a.onAckSent() // largest 5
	a.onPacket(0, 6, true, appPolicy)
	a.onAckSent() // largest 6
	a.onAckLost(time.Second, 5, appPolicy)
	if a.piggyback() || a.due(time.Hour) {
		t.Fatal("a lost ACK frame older than the last one sent is repeated")
	}
	a.onAckLost(time.Second, 6, appPolicy)
	if !a.piggyback() || a.due(time.Second) || !a.due(time.Second+appPolicy.maxDelay) {
		t.Fatal("the newest lost ACK frame is not repeated within max_ack_delay")
	}
	a.onAckSent()
	a.onAckAcked(6)
	a.onAckLost(2*time.Second, 6, ackPolicy{immediate: true})
	if a.piggyback() || a.due(time.Hour) {
		t.Fatal("an ACK frame the peer acknowledged again is repeated")
	}
	a.onPacket(3*time.Second, 7, true, ackPolicy{immediate: true})
	a.onAckSent()
	a.onAckLost(4*time.Second, 7, ackPolicy{immediate: true})
	if !a.due(4 * time.Second) {
		t.Fatal("a lost ACK frame of a handshake space is not due at once")
	}
}
