package crypto

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"time"

	"golang.org/x/crypto/chacha20poly1305"
)

// PathState is the congestion state a server saves for a client's next
// connection (RFC 9959's Observe phase): the capacity and
// RTT Careful Resume restarts from, the client it was measured to, and how
// long it may be used. The server seals it and hands it to the client in a
// BDP frame; the client returns it unread.
type PathState struct {
	// IssuedAt is when the state was saved; it survives sealing to the
	// millisecond.
	IssuedAt time.Time
	// Lifetime is how long after IssuedAt the state may be used; it
	// survives sealing to the millisecond.
	Lifetime time.Duration
	// Cwnd is the saved congestion window, in bytes per RTT (RFC 9959's
	// saved_cwnd).
	Cwnd uint64
	// RTT is the saved minimum RTT (saved_rtt); it survives sealing to the
	// microsecond.
	RTT time.Duration
	// Addr is the client's address. An IPv4 address is bound whole, an
	// IPv6 address by its /64 prefix, where one host's addresses change
	// (RFC 9959 restarts only between the endpoints the state was
	// measured between).
	Addr netip.Addr
}

// PathStateKeyLen is the key length of a PathStateSealer, an
// XChaCha20-Poly1305 key whose 24-byte nonces can be drawn at random.
const PathStateKeyLen = chacha20poly1305.KeySize

// MaxPathStateLifetime is the longest lifetime a sealed state can carry
// (32 bits of milliseconds).
const MaxPathStateLifetime = time.Duration(1<<32-1) * time.Millisecond

// PathStateSkew is how far in the future an issue time may lie and still
// be accepted: the servers of a farm that share a key may have clocks a
// little apart.
const PathStateSkew = time.Minute

// Sealed path state layout: a format byte in the clear (the associated
// data), the nonce, then the sealed fields: issue time in Unix
// milliseconds (8), lifetime in milliseconds (4), congestion window in
// bytes (8), RTT in microseconds (4), the bound address as 16 bytes (IPv4
// mapped, IPv6 /64 with the rest zero).
const (
	pathStateFormat     = 1
	pathStateNonceLen   = chacha20poly1305.NonceSizeX
	pathStateFieldsLen  = 8 + 4 + 8 + 4 + 16
	pathStateOffsetBody = 1 + pathStateNonceLen
	// PathStateSealedLen is the length of a sealed state.
	PathStateSealedLen = pathStateOffsetBody + pathStateFieldsLen + TagLen
)

// PathStateSealer seals and opens saved path states with a key only the
// servers know, so that a client can neither read nor alter what it
// carries. It is safe for concurrent use.
type PathStateSealer struct {
	aead cipher.AEAD
}

// NewPathStateSealer returns a sealer for a PathStateKeyLen-byte secret
// key.
func NewPathStateSealer(key []byte) (*PathStateSealer, error) {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("quic crypto: path state key: %w", err)
	}
	return &PathStateSealer{aead: aead}, nil
}

// Seal appends the sealed form of st to dst. rand supplies the nonce
// (crypto/rand.Reader in production, a seeded source in tests).
func (s *PathStateSealer) Seal(dst []byte, st PathState, rand io.Reader) ([]byte, error) {
	if err := st.check(); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, pathStateFormat)
	dst = append(dst, make([]byte, pathStateNonceLen)...)
	nonce := dst[start+1 : start+pathStateOffsetBody]
	if _, err := io.ReadFull(rand, nonce); err != nil {
		return dst[:start], fmt.Errorf("quic crypto: path state nonce: %w", err)
	}
	var plain [pathStateFieldsLen]byte
	st.putFields(plain[:])
	return s.aead.Seal(dst, nonce, plain[:], dst[start:start+1]), nil
}

// check validates a state before sealing.
func (st *PathState) check() error {
	switch {
	case st.Lifetime < time.Millisecond || st.Lifetime > MaxPathStateLifetime:
		return fmt.Errorf("%w: lifetime %v", ErrPathStateInvalid, st.Lifetime)
	case st.Cwnd == 0:
		return fmt.Errorf("%w: no congestion window", ErrPathStateInvalid)
	case st.RTT < time.Microsecond || st.RTT/time.Microsecond > 1<<32-1:
		return fmt.Errorf("%w: RTT %v", ErrPathStateInvalid, st.RTT)
	case !st.Addr.IsValid():
		return fmt.Errorf("%w: no client address", ErrPathStateInvalid)
	}
	return nil
}

func (st *PathState) putFields(b []byte) {
	binary.BigEndian.PutUint64(b[0:8], uint64(st.IssuedAt.UnixMilli()))
	binary.BigEndian.PutUint32(b[8:12], uint32(st.Lifetime/time.Millisecond))
	binary.BigEndian.PutUint64(b[12:20], st.Cwnd)
	binary.BigEndian.PutUint32(b[20:24], uint32(st.RTT/time.Microsecond))
	a := boundAddr(st.Addr)
	copy(b[24:40], a[:])
}

// boundAddr is the part of a client address a state is bound to: an IPv4
// address whole (as an IPv4-mapped IPv6 address), an IPv6 address's /64
// prefix.
func boundAddr(a netip.Addr) [16]byte {
	a = a.Unmap().WithZone("")
	b := a.As16()
	if a.Is6() {
		clear(b[8:])
	}
	return b
}

// Open authenticates a sealed state a client presented from addr and
// checks it at now (wall-clock time). Errors: ErrPathStateVersion for
// another format, ErrPathStateInvalid for a forged, altered or foreign
// state (sealed with another key), ErrPathStateAddress for a state issued
// to another client, ErrPathStateExpired past its lifetime.
func (s *PathStateSealer) Open(sealed []byte, addr netip.Addr, now time.Time) (PathState, error) {
	if len(sealed) > 0 && sealed[0] != pathStateFormat {
		return PathState{}, fmt.Errorf("%w: format %d", ErrPathStateVersion, sealed[0])
	}
	if len(sealed) != PathStateSealedLen {
		return PathState{}, fmt.Errorf("%w: %d bytes", ErrPathStateInvalid, len(sealed))
	}
	var plain [pathStateFieldsLen]byte
	if _, err := s.aead.Open(plain[:0], sealed[1:pathStateOffsetBody], sealed[pathStateOffsetBody:], sealed[:1]); err != nil {
		return PathState{}, fmt.Errorf("%w: not sealed with this key", ErrPathStateInvalid)
	}
	st := parsePathState(plain[:])
	if boundAddr(addr) != boundAddr(st.Addr) {
		return PathState{}, fmt.Errorf("%w: issued to %v, presented by %v", ErrPathStateAddress, st.Addr, addr)
	}
	age := now.Sub(st.IssuedAt)
	if age < -PathStateSkew || age > st.Lifetime {
		return PathState{}, fmt.Errorf("%w: %v old, lifetime %v", ErrPathStateExpired, age, st.Lifetime)
	}
	return st, nil
}

func parsePathState(b []byte) PathState {
	return PathState{
		IssuedAt: time.UnixMilli(int64(binary.BigEndian.Uint64(b[0:8]))),
		Lifetime: time.Duration(binary.BigEndian.Uint32(b[8:12])) * time.Millisecond,
		Cwnd:     binary.BigEndian.Uint64(b[12:20]),
		RTT:      time.Duration(binary.BigEndian.Uint32(b[20:24])) * time.Microsecond,
		Addr:     netip.AddrFrom16([16]byte(b[24:40])).Unmap(),
	}
}
