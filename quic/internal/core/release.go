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
