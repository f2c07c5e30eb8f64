package core

import (
	"testing"

	"github.com/satquic/satquic/quic/internal/wire"
)

// TestRebuiltFrames: the frame loop handles the frames of a packet FEC
// rebuilt as if it had arrived, but skips its ACK frames, which are stale:
// here one that acknowledges a packet never sent, a protocol violation in
// a packet received. An empty rebuilt payload is no error, unlike an
// empty packet (RFC 9000 section 12.4).
func TestRebuiltFrames(t *testing.T) {
	p := confirmedPair(t, 131)
	s := p.server
	dcid := s.cids.local[0].id
	limit := s.flow.sendMax + 1000
	payload := frameBytes(t,
		&wire.AckFrame{Ranges: []wire.AckRange{{Smallest: 1000, Largest: 1000}}},
		&wire.MaxDataFrame{Maximum: limit},
	)
	if _, err := s.processFrames(p.now, spaceApp, wire.PacketType1RTT, nil, dcid, true); err != nil {
		t.Errorf("empty rebuilt payload: %v", err)
	}
	if _, err := s.processFrames(p.now, spaceApp, wire.PacketType1RTT, payload, dcid, true); err != nil {
		t.Fatalf("rebuilt payload: %v", err)
	}
	if s.flow.sendMax != limit {
		t.Errorf("send limit %d after the rebuilt MAX_DATA, want %d", s.flow.sendMax, limit)
	}
	if _, err := s.processFrames(p.now, spaceApp, wire.PacketType1RTT, nil, dcid, false); err == nil {
		t.Error("empty packet accepted")
	}
	if _, err := s.processFrames(p.now, spaceApp, wire.PacketType1RTT, payload, dcid, false); err == nil {
		t.Error("ACK of an unsent packet accepted in a packet received")
	}
}
