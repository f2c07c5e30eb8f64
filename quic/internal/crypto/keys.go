package crypto

import (
	"crypto/sha256"
	"crypto/tls"
	"fmt"
)

// Keys protect the packets of one direction at one encryption level: an
// AEAD key and IV and a header protection key, all derived from one traffic
// secret. Initial, 0-RTT and Handshake keys are Keys; 1-RTT keys, which
// update, are [AppKeys].
type Keys struct {
	packet *PacketKey
	header *HeaderKey
}

// New derives one direction's keys from a TLS traffic secret, as a
// tls.QUICEvent of kind QUICSetReadSecret or QUICSetWriteSecret carries it:
// the cipher suite ID (tls.TLS_AES_128_GCM_SHA256...), the secret, and the
// connection's QUIC version, which selects the labels (RFC 9001 section 5.1,
// RFC 9369 section 3.3.2).
func New(suiteID uint16, secret []byte, v Version) (*Keys, error) {
	s, err := lookupSuite(suiteID)
	if err != nil {
		return nil, err
	}
	p, err := v.params()
	if err != nil {
		return nil, err
	}
	return newKeys(s, p, secret)
}

func newKeys(s *suite, p *versionParams, secret []byte) (*Keys, error) {
	if err := checkSecret(s, secret); err != nil {
		return nil, err
	}
	return newKeysFrom(s, p, s.newExpander(secret))
}

// newKeysFrom derives the keys through the expander of their secret.
func newKeysFrom(s *suite, p *versionParams, secret *expander) (*Keys, error) {
	pk, err := newPacketKey(s, p, secret)
	if err != nil {
		return nil, err
	}
	hk, err := newHeaderKey(s, p, secret)
	if err != nil {
		return nil, err
	}
	return &Keys{packet: pk, header: hk}, nil
}

// checkSecret rejects a secret whose length is not the suite's hash length,
// which TLS 1.3 traffic secrets always have (RFC 8446 section 7.1).
func checkSecret(s *suite, secret []byte) error {
	want := sha256.Size
	if !s.sha256 {
		want = s.hash().Size()
	}
	if len(secret) != want {
		return fmt.Errorf("%w: %d bytes, suite %#04x needs %d", ErrSecretLength, len(secret), s.id, want)
	}
	return nil
}

// Packet returns the AEAD key.
func (k *Keys) Packet() *PacketKey { return k.packet }

// Header returns the header protection key.
func (k *Keys) Header() *HeaderKey { return k.header }

// Protect seals packet in place and then applies header protection: the
// whole send path of RFC 9001 sections 5.3 and 5.4. packet holds the
// unprotected header, whose packet number starts at pnOffset and has the
// length its first byte says, followed by the plaintext payload. The
// payload must be long enough for a header protection sample (section
// 5.4.2: with the 16-byte tag, at least 4 bytes of packet number and
// payload together).
func (k *Keys) Protect(packet []byte, pnOffset int, pn uint64) ([]byte, error) {
	return protect(k.packet, k.header, packet, pnOffset, pn)
}

func protect(pk *PacketKey, hk *HeaderKey, packet []byte, pnOffset int, pn uint64) ([]byte, error) {
	if pnOffset < 1 || pnOffset >= len(packet) {
		return nil, fmt.Errorf("%w: packet number offset %d, packet %d bytes", ErrBadOffset, pnOffset, len(packet))
	}
	hdrLen := pnOffset + int(packet[0]&pnLenMask) + 1
	out, err := pk.Seal(packet, hdrLen, pn)
	if err != nil {
		return nil, err
	}
	if err := hk.Apply(out, pnOffset); err != nil {
		return nil, err
	}
	return out, nil
}

// InitialSecrets derives the client and server Initial secrets from the
// Destination Connection ID of the client's first Initial packet (RFC 9001
// section 5.2; the salt is per version, RFC 9369 section 3.3.1).
func InitialSecrets(dcid []byte, v Version) (client, server []byte, err error) {
	p, err := v.params()
	if err != nil {
		return nil, nil, err
	}
	// Initial secrets use SHA-256 whatever the suite (RFC 9001 section
	// 5.2).
	e := newSHA256Expander(extractSHA256(p.initialSalt, dcid))
	client, err = e.expandLabel("client in", sha256.Size)
	if err != nil {
		return nil, nil, err
	}
	server, err = e.expandLabel("server in", sha256.Size)
	if err != nil {
		return nil, nil, err
	}
	return client, server, nil
}

// NewInitial derives the Initial keys of both directions: client protects
// what the client sends, server what the server sends. Initial packets
// always use AEAD_AES_128_GCM (RFC 9001 section 5).
func NewInitial(dcid []byte, v Version) (client, server *Keys, err error) {
	cs, ss, err := InitialSecrets(dcid, v)
	if err != nil {
		return nil, nil, err
	}
	p, err := v.params()
	if err != nil {
		return nil, nil, err
	}
	if client, err = newKeys(&suiteAES128GCM, p, cs); err != nil {
		return nil, nil, err
	}
	if server, err = newKeys(&suiteAES128GCM, p, ss); err != nil {
		return nil, nil, err
	}
	return client, server, nil
}

// InitialSuite is the cipher suite of Initial packets.
const InitialSuite = tls.TLS_AES_128_GCM_SHA256
