package core

import (
	"time"

	"github.com/satquic/satquic/quic/internal/crypto"
	"github.com/satquic/satquic/quic/internal/wire"
)

// keyUpdateState tracks 1-RTT key updates (RFC 9001 section 6).
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

// newPhase resets the tracking after the keys changed.
func (k *keyUpdateState) newPhase(discardAt time.Duration) {
	k.started, k.acked = false, false
	k.discardAt, k.discardArmed = discardAt, true
	k.updates++
}

// maybeStartKeyUpdate initiates a key update after KeyUpdateInterval
// packets with one key, or before the AEAD confidentiality limit (RFC 9001
// sections 6.1 and 6.6), once the handshake is confirmed and the previous
// update was acknowledged.
func (c *Conn) maybeStartKeyUpdate() {
	if !c.handshakeConfirmed || c.appWrite == nil || !c.ku.acked {
		return
	}
	key := c.appWrite.Current()
	limit := key.ConfidentialityLimit()
	due := key.Sealed() >= limit-limit/8
	if n := c.cfg.KeyUpdateInterval; n > 0 && key.Sealed() >= n {
		due = true
	}
	if !due {
		return
	}
	if err := c.appWrite.Update(); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "key update: %v", err))
		return
	}
	// The peer's packets will come with the next keys too.
	if err := c.appRead.Update(); err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "key update: %v", err))
		return
	}
	c.ku.newPhase(c.now + 3*c.pto())
}

// onKeyPhase records which keys opened a 1-RTT packet; opening with the
// next keys means the peer updated, and this endpoint follows (RFC 9001
// section 6.2).
func (c *Conn) onKeyPhase(gen crypto.KeyGen, pn uint64) error {
	updated, err := c.appRead.Opened(gen, pn)
	if err != nil {
		return transportError(wire.CodeKeyUpdateError, 0, "%v", err)
	}
	if !updated {
		return nil
	}
	if err := c.appWrite.Update(); err != nil {
		return transportError(wire.CodeInternalError, 0, "key update: %v", err)
	}
	c.ku.newPhase(c.now + 3*c.pto())
	return nil
}

// KeyUpdates returns how many times the 1-RTT keys changed.
func (c *Conn) KeyUpdates() uint64 { return c.ku.updates }
