package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// keyUpdateState tracks 1-RTT key updates (RFC 9001 section 6). The keys
// themselves are the connection's (crypto.AppKeys, one for each
// direction); the methods are handed them.
type keyUpdateState struct {
	// phaseStart is the first packet number sent with the current keys,
	// valid when started; acked once a packet of the phase was
	// acknowledged, which a new update waits for (section 6.1).
	phaseStart uint64
	started    bool
	acked      bool

	// discardAt is when the previous read keys go (section 6.5: three
	// PTOs after the update).
	discardAt    time.Duration
	discardArmed bool

	updates uint64
}

func (k *keyUpdateState) onSent(pn uint64) {
	if !k.started {
		k.phaseStart, k.started = pn, true
	}
}

func (k *keyUpdateState) onAcked(pn uint64) {
	if k.started && pn >= k.phaseStart {
		k.acked = true
	}
}

// due reports whether this endpoint should update its keys: after
// interval packets sealed with one key (0: no such limit), or before the
// AEAD confidentiality limit (RFC 9001 sections 6.1 and 6.6), once a
// packet of the current phase was acknowledged.
func (k *keyUpdateState) due(write *crypto.AppKeys, interval uint64) bool {
	if !k.acked {
		return false
	}
	key := write.Current()
	limit := key.ConfidentialityLimit()
	return key.Sealed() >= limit-limit/8 || (interval > 0 && key.Sealed() >= interval)
}

// start moves both directions to the next keys at now: the peer's
// packets will come with them too.
func (k *keyUpdateState) start(now, pto time.Duration, write, read *crypto.AppKeys) error {
	if err := write.Update(); err != nil {
		return transportError(wire.CodeInternalError, 0, "key update: %v", err)
	}
	if err := read.Update(); err != nil {
		return transportError(wire.CodeInternalError, 0, "key update: %v", err)
	}
	k.newPhase(now, pto)
	return nil
}

// onOpened records which keys opened a 1-RTT packet received at now;
// opening with the next keys means the peer updated, and this endpoint
// follows (RFC 9001 section 6.2).
func (k *keyUpdateState) onOpened(now, pto time.Duration, read, write *crypto.AppKeys, gen crypto.KeyGen, pn uint64) error {
	updated, err := read.Opened(gen, pn)
	if err != nil {
		return transportError(wire.CodeKeyUpdateError, 0, "%v", err)
	}
	if !updated {
		return nil
	}
	if err := write.Update(); err != nil {
		return transportError(wire.CodeInternalError, 0, "key update: %v", err)
	}
	k.newPhase(now, pto)
	return nil
}

// newPhase resets the tracking after the keys changed at now.
func (k *keyUpdateState) newPhase(now, pto time.Duration) {
	k.started, k.acked = false, false
	k.discardAt, k.discardArmed = now+3*pto, true
	k.updates++
}

// discardTimer is when the previous read keys go, if they are kept.
func (k *keyUpdateState) discardTimer() (time.Duration, bool) {
	return k.discardAt, k.discardArmed
}

// onTimer discards the previous read keys when their time came.
func (k *keyUpdateState) onTimer(now time.Duration, read *crypto.AppKeys) {
	if k.discardArmed && now >= k.discardAt {
		k.discardArmed = false
		read.DiscardPrevious()
	}
}

// maybeStartKeyUpdate initiates a key update at now when one is due, once
// the handshake is confirmed.
func (c *Conn) maybeStartKeyUpdate(now time.Duration) {
	if !c.handshakeConfirmed || c.appWrite == nil || !c.ku.due(c.appWrite, c.cfg.KeyUpdateInterval) {
		return
	}
	if err := c.ku.start(now, probeTimeout(c.sender.RTT()), c.appWrite, c.appRead); err != nil {
		c.closeLocal(asTransportError(err))
	}
}

// KeyUpdates returns how many times the 1-RTT keys changed.
func (c *Conn) KeyUpdates() uint64 { return c.ku.updates }
