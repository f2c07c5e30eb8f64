package core

import "testing"

// TestLostFlowFrames: a lost MAX_DATA goes again with the current limit; a
// lost DATA_BLOCKED goes again only while the connection is still blocked
// at the limit it reported (RFC 9000 section 13.3).
func TestLostFlowFrames(t *testing.T) {
	f := connFlow{sendMax: 100, sent: 100}
	f.onDataBlockedLost(50)
	if f.blockedQueue {
		t.Error("DATA_BLOCKED queued again for a limit since raised")
	}
	f.onDataBlockedLost(100)
	if !f.blockedQueue {
		t.Error("DATA_BLOCKED not queued again while blocked at its limit")
	}
	f = connFlow{sendMax: 100, sent: 60}
	f.onDataBlockedLost(100)
	if f.blockedQueue {
		t.Error("DATA_BLOCKED queued again with credit left")
	}
	f.onMaxDataLost()
	if !f.limitPending {
		t.Error("MAX_DATA not queued again")
	}
}

// TestLostStreamLimitFrames: a lost MAX_STREAMS goes again for its
// direction; a lost STREAMS_BLOCKED only while the peer's limit is still
// the one it reported.
func TestLostStreamLimitFrames(t *testing.T) {
	var m streamMap
	m.peerMax = [2]uint64{10, 20}
	m.onStreamsBlockedLost(sentFrame{kind: fkStreamsBlockedUni, n: 10})
	if m.blockedPending != [2]bool{} {
		t.Errorf("STREAMS_BLOCKED for a raised limit queued again: %v", m.blockedPending)
	}
	m.onStreamsBlockedLost(sentFrame{kind: fkStreamsBlockedUni, n: 20})
	if m.blockedPending != [2]bool{false, true} {
		t.Errorf("blocked pending %v, want the unidirectional one", m.blockedPending)
	}
	m.onMaxStreamsLost(sentFrame{kind: fkMaxStreamsBidi, n: 5})
	if m.maxPending != [2]bool{true, false} {
		t.Errorf("MAX_STREAMS pending %v, want the bidirectional one", m.maxPending)
	}
}

// TestLostNewConnectionID: a lost NEW_CONNECTION_ID is announced again
// unless its connection ID was retired meanwhile.
func TestLostNewConnectionID(t *testing.T) {
	ids := connIDs{local: []localCID{{seq: 0}, {seq: 2}}}
	ids.onNewConnIDLost(1)
	ids.onNewConnIDLost(2)
	if len(ids.announce) != 1 || ids.announce[0] != 2 {
		t.Errorf("announce %v, want [2]", ids.announce)
	}
}
