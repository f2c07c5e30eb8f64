package core

import "crypto/tls"

// startClientTLS starts the client's TLS handshake: its ClientHello goes
// out in the first Initial packets. Session events let the core add the
// resumption entry to tickets and read it back (resume.go).
func (c *Conn) startClientTLS() error {
	return c.startTLS(tls.QUICClient(&tls.QUICConfig{TLSConfig: c.cfg.tlsConfig(), EnableSessionEvents: true}))
}
