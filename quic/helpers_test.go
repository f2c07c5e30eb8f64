package quic

import (
	"crypto/sha256"
	"crypto/tls"

	"github.com/satquic/satquic/internal/testkit"
)

const testALPN = "satquic-test"

func serverTLS() *tls.Config { return testkit.ServerTLS(testALPN) }

// clientTLS trusts testkit's certificate only.
func clientTLS() *tls.Config { return testkit.ClientTLS("localhost", testALPN) }

func sum(b []byte) [32]byte { return sha256.Sum256(b) }
