package connectip

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"net/http"
	"strings"
)

// CheckToken reports whether the request carries the bearer token token
// in its Authorization header ("Authorization: Bearer <token>", RFC 6750
// section 2.1; the scheme is case-insensitive, RFC 9110 section 11.1). The
// comparison takes the same time whatever the header holds: both sides are
// hashed first, so that neither the token's bytes nor its length leak. An
// empty token accepts nobody.
//
// A CONNECT-IP server calls it in its handler before accepting the
// extended CONNECT, and answers 401 (with "WWW-Authenticate: Bearer") when
// it fails, so that only its clients can open a tunnel (RFC 9484 section
// 11). The token travels inside TLS; give every client its own.
func CheckToken(r *http.Request, token string) bool {
	if token == "" {
		return false
	}
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	got := sha256.Sum256([]byte(strings.TrimSpace(cred)))
	want := sha256.Sum256([]byte(token))
	match := subtle.ConstantTimeCompare(got[:], want[:]) == 1
	return match && strings.EqualFold(scheme, "Bearer")
}

// ClientCertificate returns the client certificate that the TLS handshake
// of the request's connection verified, if any. A server that
// authenticates its tunnel clients by certificate sets, in its
// tls.Config, ClientAuth to tls.RequireAndVerifyClientCert and ClientCAs
// to the authority that issues them: the handshake then fails for anyone
// else, and the handler can still decide by the certificate (its subject,
// say) which addresses and routes the client gets.
func ClientCertificate(r *http.Request) (*x509.Certificate, bool) {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil, false
	}
	return r.TLS.VerifiedChains[0][0], true
}
