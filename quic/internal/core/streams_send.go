package core

// onStreamAcked records the acknowledgement of a STREAM frame.
func (m *streamMap) onStreamAcked(f sentFrame) {
	s := m.m[f.id]
	if s == nil || s.send == nil || s.send.reset {
		return
	}
	sd := s.send
	sd.buf.onAck(f.off, f.n)
	if f.fin {
		sd.finAcked = true
	}
	if sd.wantWritable && m.sendRoom(&sd.buf) > 0 {
		sd.wantWritable = false
		m.notifyWritable(s)
	}
	m.maybeRemove(s)
}

// onStreamLost queues the data of a lost STREAM frame again.
func (m *streamMap) onStreamLost(f sentFrame) {
	s := m.m[f.id]
	if s == nil || s.send == nil || s.send.reset {
		return
	}
	sd := s.send
	sd.buf.onLost(f.off, f.n)
	if f.fin && !sd.finAcked {
		sd.finSent = false
	}
	m.queueSend(s)
}

// onControlLost queues a lost stream control frame again if it still
// matters (RFC 9000 section 13.3).
func (m *streamMap) onControlLost(f sentFrame) {
	s := m.m[f.id]
	if s == nil {
		return
	}
	switch f.kind {
	case fkMaxStreamData:
		if r := s.recv; r != nil && !r.hasFinal && !r.stopped {
			r.limitPending = true
			m.queueCtrl(s)
		}
	case fkStopSending:
		if r := s.recv; r != nil && r.stopped && !r.done() {
			r.stopPending = true
			m.queueCtrl(s)
		}
	case fkResetStream:
		if sd := s.send; sd != nil && sd.reset && !sd.resetAcked {
			sd.resetPending = true
			m.queueCtrl(s)
		}
	case fkStreamDataBlocked:
		if sd := s.send; sd != nil && sd.maxData == f.n && sd.buf.next >= sd.maxData {
			sd.blockedPending = true
			m.queueCtrl(s)
		}
	}
}
