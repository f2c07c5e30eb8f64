package core

// Release frees what a connection holds outside its own memory: crypto/tls
// runs the handshake in a goroutine that waits for handshake data until the
// handshake ends or its QUICConn is closed. A driver calls Release when it
// is done with the connection (after Closed reports true, or when it
// abandons it), so that a connection that ended during its handshake
// leaves no goroutine behind. Only ConnectionState, Stats and the stream
// read calls remain usable afterwards.
func (c *Conn) Release() {
	if c.tls != nil {
		_ = c.tls.Close()
	}
}
