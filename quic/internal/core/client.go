package core

import "crypto/tls"

// newClientTLS is a client's TLS handshake, which startTLS starts: its
// ClientHello goes out in the first Initial packets. Session events let
// the core add the resumption entry to tickets and read it back
// (resume.go).
func newClientTLS(cfg *Config) *tls.QUICConn {
	return tls.QUICClient(&tls.QUICConfig{TLSConfig: cfg.tlsConfig(), EnableSessionEvents: true})
}
