package core

import (
	"slices"

	"github.com/satquic/satquic/quic/internal/wire"
)

// The peer's connection IDs on a new path: an endpoint must not send to a
// new address, or from one, with the connection ID of the old path, so
// that an observer cannot link the two (RFC 9000 section 9.5).

// spare is the peer's connection ID for packets on a new path: the next
// one after the one in use, or that one when the peer gave no other.
func (ids *connIDs) spare() wire.ConnectionID {
	if len(ids.peer) > 1 {
		return ids.peer[1].id
	}
	return ids.peer[0].id
}

// useSpare moves to the peer's next connection ID and retires the one in
// use, when the peer gave a spare one.
func (ids *connIDs) useSpare() bool {
	if len(ids.peer) < 2 {
		return false
	}
	return ids.switchTo(ids.peer[1].id)
}

// switchTo moves to the peer's connection ID id and retires those before
// it, which the old path used (RFC 9000 section 5.1.2); it reports false
// when id is no longer one of the peer's.
func (ids *connIDs) switchTo(id wire.ConnectionID) bool {
	i := slices.IndexFunc(ids.peer, func(p peerCID) bool { return p.id == id })
	if i < 0 {
		return false
	}
	for _, p := range ids.peer[:i] {
		ids.queueRetire(p.seq)
	}
	ids.peer = slices.Delete(ids.peer, 0, i)
	return true
}
