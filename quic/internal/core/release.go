package core

// Release frees what a connection holds outside its own memory: crypto/tls
// runs the handshake in a goroutine that waits for handshake data until the
// handshake ends or its QUICConn is closed. The core calls Release itself
// when the connection reaches the closed state (Closed reports true), so
// that a connection that ended during its handshake leaves no goroutine
// behind; a driver calls it when it abandons a connection before that. It
// is idempotent. Only ConnectionState, Stats and the stream read calls
// remain usable afterwards.
func (c *Conn) Release() {
	c.tls.release()
}

// setClosed ends the connection: nothing more is sent, received or timed,
// and Release frees the handshake.
func (c *Conn) setClosed() {
	c.state = stateClosed
	c.closing.packet = nil
	c.Release()
}

// ReleaseIdle frees what the connection keeps for reuse or can build again
// when it next needs it, so that a connection that goes idle holds little
// more than its state: the expanded ciphers of its 1-RTT keys (about 3 kB
// for AES-GCM; the keys themselves stay, crypto.AppKeys.DropCiphers), the
// storage of its sent-packet logs and of the recovery Sender's records
// beyond what they hold, the packet builder's scratch, the frame parser,
// the buffers of received datagrams kept for reuse and an empty event
// queue. A driver calls it when it expects no call for
// a while (package quic's when the connection's goroutine parks); the next
// calls allocate again what they use. It changes nothing the connection
// does.
func (c *Conn) ReleaseIdle() {
	if c.appRead != nil {
		c.appRead.DropCiphers()
	}
	if c.appWrite != nil {
		c.appWrite.DropCiphers()
	}
	for _, sp := range c.spaces {
		sp.sent.shrink()
	}
	c.sender.ReleaseIdle()
	c.build, c.parser = nil, nil
	clear(c.dgram.recvSpare)
	c.dgram.recvSpare = nil
	c.events.releaseIfEmpty()
}

// shrink moves the log's records into an array of their number, or drops
// the array when it holds none: an idle connection's log is empty or
// holds its last ACK-only packets, which the peer acknowledges only when
// it next sends. Finished records at its front go first.
func (l *sentLog) shrink() {
	l.compact()
	if l.count == 0 {
		l.ring, l.head = nil, 0
		return
	}
	if l.count == len(l.ring) {
		return
	}
	ring := make([]sentPacket, l.count)
	for i := range l.count {
		ring[i] = l.ring[(l.head+i)%len(l.ring)]
	}
	l.ring, l.head = ring, 0
}

// releaseIfEmpty drops the queue's array when no event waits.
func (e *eventQueue) releaseIfEmpty() {
	if e.head == len(e.q) {
		e.q, e.head = nil, 0
	}
}
