package crypto

import (
	"crypto/cipher"
	"fmt"
)

// MaxConnIDLen is the longest connection ID QUIC versions 1 and 2 allow
// (RFC 9000 section 17.2).
const MaxConnIDLen = 20

// minRetryLen is the shortest Retry packet: first byte, version, two
// connection ID lengths and the integrity tag (RFC 9000 section 17.2.5).
const minRetryLen = 1 + 4 + 1 + 1 + TagLen

// retryAEAD returns the fixed AES-128-GCM AEAD and nonce of the version's
// Retry Integrity Tag (RFC 9001 section 5.8, RFC 9369 section 3.3.3).
func retryAEAD(v Version) (cipher.AEAD, []byte, error) {
	p, err := v.params()
	if err != nil {
		return nil, nil, err
	}
	aead, err := newAESGCM(p.retryKey)
	if err != nil {
		return nil, nil, err
	}
	return aead, p.retryNonce, nil
}

// retryPseudoPacket builds the associated data of the tag: the original
// Destination Connection ID, prefixed with its length, followed by the
// Retry packet without its tag (RFC 9001 section 5.8, figure 8).
func retryPseudoPacket(odcid, retry []byte) ([]byte, error) {
	if len(odcid) > MaxConnIDLen {
		return nil, fmt.Errorf("%w: original destination connection ID of %d bytes", ErrConnIDLen, len(odcid))
	}
	pseudo := make([]byte, 0, 1+len(odcid)+len(retry))
	pseudo = append(pseudo, byte(len(odcid)))
	pseudo = append(pseudo, odcid...)
	return append(pseudo, retry...), nil
}

// AppendRetryTag appends the Retry Integrity Tag to retry, a complete Retry
// packet up to and including its Retry Token. odcid is the Destination
// Connection ID of the client Initial the Retry answers; v is the version
// of the Retry packet.
func AppendRetryTag(retry, odcid []byte, v Version) ([]byte, error) {
	if len(retry) < minRetryLen-TagLen {
		return nil, fmt.Errorf("%w: Retry packet of %d bytes", ErrPacketTooShort, len(retry))
	}
	aead, nonce, err := retryAEAD(v)
	if err != nil {
		return nil, err
	}
	pseudo, err := retryPseudoPacket(odcid, retry)
	if err != nil {
		return nil, err
	}
	// The plaintext is empty, so the AEAD output is the tag alone.
	return aead.Seal(retry, nonce, nil, pseudo), nil
}

// VerifyRetry checks the Retry Integrity Tag that ends packet, a received
// Retry packet, against odcid, the Destination Connection ID the client
// put in its first Initial. It returns an error wrapping
// [ErrAuthentication] when the tag does not match.
func VerifyRetry(packet, odcid []byte, v Version) error {
	if len(packet) < minRetryLen {
		return fmt.Errorf("%w: Retry packet of %d bytes", ErrPacketTooShort, len(packet))
	}
	aead, nonce, err := retryAEAD(v)
	if err != nil {
		return err
	}
	body, tag := packet[:len(packet)-TagLen], packet[len(packet)-TagLen:]
	pseudo, err := retryPseudoPacket(odcid, body)
	if err != nil {
		return err
	}
	// Opening the tag as a ciphertext of an empty plaintext compares it
	// in constant time.
	if _, err := aead.Open(nil, nonce, tag, pseudo); err != nil {
		return fmt.Errorf("%w: Retry integrity tag", ErrAuthentication)
	}
	return nil
}
