package quic

import (
	"errors"
	"fmt"
	"io"
)

// The limits of a QUIC-LB connection ID (draft-ietf-quic-load-balancers-21,
// "Server ID Allocation" and "Plaintext" encoding): one first octet, a
// server ID of 1 to 15 octets, then a nonce of 4 to 18 octets, at most 20
// octets in all.
const (
	quicLBMaxServerIDLen = 15
	quicLBMinNonceLen    = 4
	quicLBMaxNonceLen    = 18
	// quicLBUnroutable is the config rotation codepoint of connection IDs
	// that carry no server ID ("Config Rotation": 0b111).
	quicLBUnroutable = 7
	// quicLBDefaultLen is the length a QUICLB picks without a NonceLength:
	// the Transport's default, or the shortest allowed nonce.
	quicLBDefaultLen = DefaultConnectionIDLength
)

// QUICLB makes a Transport issue connection IDs in the format of QUIC-LB
// (draft-ietf-quic-load-balancers-21) with its plaintext algorithm: a first
// octet whose top three bits are the config rotation codepoint, then the
// server ID, then a nonce. A load balancer in front of a farm of servers
// that knows the configuration (config ID, server ID length) reads the
// server ID of every packet's Destination Connection ID and sends it to
// that server, whatever address the client moves to; only a client's first
// Initial and 0-RTT packets, whose Destination Connection ID the client
// chose, are routed another way (by address, for example).
//
// The server ID is in clear: an observer can tell which server a
// connection uses, though not link a client's connection IDs to each other
// beyond that.
type QUICLB struct {
	// ConfigID is the config rotation codepoint, 0 to 6 ("Config
	// Rotation"): a load balancer that moves to a new configuration keeps
	// routing the connection IDs of the old one by it.
	ConfigID uint8
	// ServerID names this server to the load balancer, 1 to 15 octets;
	// every server of one configuration uses the same length.
	ServerID []byte
	// NonceLength is the length of the nonce after the server ID, 4 to 18
	// octets, with ServerID at most 19 octets together. Zero makes the
	// connection ID 8 octets long, or longer where the server ID needs it.
	NonceLength int
	// EncodeLength writes the connection ID's length minus one into the
	// low five bits of the first octet ("Length Self-Description"), for
	// load balancers and offload hardware that need the length of a short
	// header's connection ID; without it those bits are random.
	EncodeLength bool
}

// QUICLBConnID is a connection ID in QUIC-LB's plaintext format, split into
// its fields.
type QUICLBConnID struct {
	ConfigID uint8
	// LengthBits are the low five bits of the first octet: the
	// connection ID's length minus one if the server self-encodes it,
	// random bits otherwise.
	LengthBits uint8
	ServerID   []byte
	Nonce      []byte
}

var errQUICLB = errors.New("quic: QUIC-LB")

// nonceLen is the nonce length q uses.
func (q *QUICLB) nonceLen() int {
	if q.NonceLength != 0 {
		return q.NonceLength
	}
	return max(quicLBMinNonceLen, quicLBDefaultLen-1-len(q.ServerID))
}

// Len is the length of the connection IDs q makes.
func (q *QUICLB) Len() int { return 1 + len(q.ServerID) + q.nonceLen() }

// validate checks q against the draft's limits.
func (q *QUICLB) validate() error {
	n := q.nonceLen()
	switch {
	case q.ConfigID >= quicLBUnroutable:
		return fmt.Errorf("%w: config ID %d out of [0, 6]", errQUICLB, q.ConfigID)
	case len(q.ServerID) < 1 || len(q.ServerID) > quicLBMaxServerIDLen:
		return fmt.Errorf("%w: server ID of %d octets out of [1, %d]", errQUICLB, len(q.ServerID), quicLBMaxServerIDLen)
	case n < quicLBMinNonceLen || n > quicLBMaxNonceLen:
		return fmt.Errorf("%w: nonce of %d octets out of [%d, %d]", errQUICLB, n, quicLBMinNonceLen, quicLBMaxNonceLen)
	case len(q.ServerID)+n > 19:
		return fmt.Errorf("%w: server ID and nonce of %d octets, more than 19", errQUICLB, len(q.ServerID)+n)
	}
	return nil
}

// encode fills id (q.Len() octets) with a new connection ID: the first
// octet, the server ID and a nonce drawn from r. The nonce is random, so
// that connection IDs of one server cannot be told apart or counted.
func (q *QUICLB) encode(id []byte, r io.Reader) error {
	if len(id) != q.Len() {
		return fmt.Errorf("%w: connection ID of %d octets, the configuration makes %d", errQUICLB, len(id), q.Len())
	}
	if _, err := io.ReadFull(r, id); err != nil {
		return err
	}
	low := id[0] & 0x1f
	if q.EncodeLength {
		low = byte(len(id) - 1)
	}
	id[0] = q.ConfigID<<5 | low
	copy(id[1:], q.ServerID)
	return nil
}

// DecodeQUICLB splits a connection ID in QUIC-LB's plaintext format, whose
// configuration has server IDs of serverIDLen octets, as a load balancer
// does to route it. It refuses an unroutable ID (config rotation 0b111) and
// one too short for the server ID and a nonce of 4 octets; the slices point
// into cid.
func DecodeQUICLB(cid []byte, serverIDLen int) (QUICLBConnID, error) {
	var d QUICLBConnID
	switch {
	case serverIDLen < 1 || serverIDLen > quicLBMaxServerIDLen:
		return d, fmt.Errorf("%w: server ID length %d out of [1, %d]", errQUICLB, serverIDLen, quicLBMaxServerIDLen)
	case len(cid) > 20:
		return d, fmt.Errorf("%w: connection ID of %d octets, longer than 20", errQUICLB, len(cid))
	case len(cid) < 1+serverIDLen+quicLBMinNonceLen:
		return d, fmt.Errorf("%w: connection ID of %d octets too short for a server ID of %d and a nonce", errQUICLB, len(cid), serverIDLen)
	}
	d.ConfigID, d.LengthBits = cid[0]>>5, cid[0]&0x1f
	if d.ConfigID == quicLBUnroutable {
		return d, fmt.Errorf("%w: unroutable connection ID (config rotation 0b111)", errQUICLB)
	}
	d.ServerID = cid[1 : 1+serverIDLen]
	d.Nonce = cid[1+serverIDLen:]
	return d, nil
}
