package crypto

import (
	"fmt"
	"math"
)

// KeyGen names a generation of 1-RTT packet keys relative to the current
// one (RFC 9001 section 6).
type KeyGen uint8

// The generations an endpoint keeps for receiving (section 6.3: current and
// next are required, previous helps with reordering).
const (
	GenCurrent KeyGen = iota
	GenPrevious
	GenNext
)

// String names the generation for logs.
func (g KeyGen) String() string {
	switch g {
	case GenCurrent:
		return "current"
	case GenPrevious:
		return "previous"
	case GenNext:
		return "next"
	}
	return fmt.Sprintf("KeyGen(%d)", uint8(g))
}

// noPN marks "no packet opened yet" in the packet number bookkeeping.
const noPN = math.MaxUint64

// generation is one key phase's secret and packet key.
type generation struct {
	secret []byte
	key    *PacketKey
}

// AppKeys are the 1-RTT keys of one direction with key update (RFC 9001
// section 6). The header protection key never changes; the packet keys
// move through generations, each secret derived from the one before with
// the "quic ku" label (section 6.1).
//
// The next generation is derived in advance, so that opening a packet that
// starts a key update takes no longer than any other (section 6.3); keys
// for sending ([NewSendAppKeys]) derive its packet key on first use. When
// the key phase changes the old current keys become the previous ones; the
// core discards them with [AppKeys.DiscardPrevious] when its timer says so
// (section 6.5 suggests three PTOs).
//
// A sender uses Current, KeyPhase, Update and Protect. A receiver uses
// Select, then the chosen key's Open, then Opened.
type AppKeys struct {
	suite  *suite
	params *versionParams
	header *HeaderKey
	prev   *generation // nil when none or discarded
	cur    *generation
	next   *generation
	phase  uint8  // Key Phase bit of cur
	gen    uint64 // completed key updates

	// Packet numbers opened per generation, for key selection and the
	// ordering rule of section 6.4. noPN when none.
	lowestCur   uint64
	highestCur  uint64
	highestPrev uint64

	// lazyNext: the next generation's packet key is derived when it is
	// first used (NewSendAppKeys).
	lazyNext bool
	// dropped: DropCiphers freed the ciphers, which Select builds again.
	dropped bool
}

// NewAppKeys derives 1-RTT keys from a TLS application traffic secret (see
// [New] for the arguments), with the first key phase (Key Phase bit 0).
// They suit receiving: the next generation's packet key is ready before a
// packet needs it (section 6.3).
func NewAppKeys(suiteID uint16, secret []byte, v Version) (*AppKeys, error) {
	return newAppKeys(suiteID, secret, v, false)
}

// NewSendAppKeys is [NewAppKeys] for sending. The next generation's
// secret is derived at once, its packet key only when an update moves to
// it: the time a sender takes to update leaks nothing about the packets
// it received (the timing of section 6.3 concerns opening them), and a
// connection that never updates (most) holds one packet key less.
func NewSendAppKeys(suiteID uint16, secret []byte, v Version) (*AppKeys, error) {
	return newAppKeys(suiteID, secret, v, true)
}

func newAppKeys(suiteID uint16, secret []byte, v Version, lazyNext bool) (*AppKeys, error) {
	s, err := lookupSuite(suiteID)
	if err != nil {
		return nil, err
	}
	p, err := v.params()
	if err != nil {
		return nil, err
	}
	if err := checkSecret(s, secret); err != nil {
		return nil, err
	}
	// One expander of the secret derives the keys of this phase and the
	// secret of the next.
	e := s.newExpander(secret)
	k, err := newKeysFrom(s, p, e)
	if err != nil {
		return nil, err
	}
	a := &AppKeys{
		suite: s, params: p, header: k.header, lazyNext: lazyNext,
		cur:       &generation{secret: append([]byte(nil), secret...), key: k.packet},
		lowestCur: noPN, highestCur: noPN, highestPrev: noPN,
	}
	if a.next, err = a.deriveFrom(e, len(secret)); err != nil {
		return nil, err
	}
	return a, nil
}

// derive makes the generation after the one with the given secret:
// secret_<n+1> = HKDF-Expand-Label(secret_<n>, "quic ku", "", Hash.length)
// (section 6.1), with a fresh key and IV and the same header key.
func (a *AppKeys) derive(secret []byte) (*generation, error) {
	return a.deriveFrom(a.suite.newExpander(secret), len(secret))
}

// deriveFrom is derive through the expander of the secret, of size bytes.
func (a *AppKeys) deriveFrom(secret *expander, size int) (*generation, error) {
	next, err := secret.expandLabel(a.params.kuLabel, size)
	if err != nil {
		return nil, fmt.Errorf("quic crypto: key update: %w", err)
	}
	g := &generation{secret: next}
	if a.lazyNext {
		return g, nil
	}
	if err := a.ensureKey(g); err != nil {
		return nil, err
	}
	return g, nil
}

// ensureKey derives the packet key of generation g if it has none yet.
func (a *AppKeys) ensureKey(g *generation) error {
	if g.key != nil {
		return nil
	}
	pk, err := newPacketKey(a.suite, a.params, a.suite.newExpander(g.secret))
	if err != nil {
		return fmt.Errorf("quic crypto: key update: %w", err)
	}
	g.key = pk
	return nil
}

// Header returns the header protection key, the same for every generation.
func (a *AppKeys) Header() *HeaderKey { return a.header }

// Current returns the key of the current key phase: the only one used to
// send (section 6.4).
func (a *AppKeys) Current() *PacketKey { return a.cur.key }

// Next returns the key of the next key phase, nil if it cannot be derived
// (keys from NewSendAppKeys derive it here).
func (a *AppKeys) Next() *PacketKey {
	if a.ensureKey(a.next) != nil {
		return nil
	}
	return a.next.key
}

// Previous returns the key of the previous key phase, or nil if there is
// none or it was discarded.
func (a *AppKeys) Previous() *PacketKey {
	if a.prev == nil {
		return nil
	}
	return a.prev.key
}

// KeyPhase returns the Key Phase bit of the current generation.
func (a *AppKeys) KeyPhase() uint8 { return a.phase }

// Generation returns how many key updates these keys went through.
func (a *AppKeys) Generation() uint64 { return a.gen }

// Update moves to the next key phase: current becomes previous, next
// becomes current, and the generation after is derived. A sender calls it
// to initiate a key update (section 6.1) or to follow the peer's (section
// 6.2); a receiver calls it when it initiates one, since the peer's
// packets will then come with the new keys. Any previous keys still kept
// are discarded.
func (a *AppKeys) Update() error {
	if err := a.ensureKey(a.next); err != nil {
		return err
	}
	next, err := a.derive(a.next.secret)
	if err != nil {
		return err
	}
	a.DiscardPrevious()
	a.prev, a.cur, a.next = a.cur, a.next, next
	a.phase ^= 1
	a.gen++
	a.highestPrev = a.highestCur
	a.lowestCur, a.highestCur = noPN, noPN
	return nil
}

// DiscardPrevious forgets the previous generation (section 6.5: after about
// three PTOs). Packets of the old key phase then select the next keys.
func (a *AppKeys) DiscardPrevious() {
	if a.prev == nil {
		return
	}
	clear(a.prev.secret)
	a.prev = nil
}

// Select chooses the key for a received 1-RTT packet from its Key Phase bit
// and its packet number, both known once header protection is removed
// (section 6.5). The current phase uses the current keys. The other phase
// uses the previous keys when they are kept and the packet is older than
// every packet of the current phase, and the next keys otherwise.
func (a *AppKeys) Select(phase uint8, pn uint64) (KeyGen, *PacketKey) {
	a.rebuildCiphers()
	if phase&1 == a.phase {
		return GenCurrent, a.cur.key
	}
	if a.prev != nil && (a.lowestCur == noPN || pn < a.lowestCur) {
		return GenPrevious, a.prev.key
	}
	return GenNext, a.Next()
}

// Opened records that the packet numbered pn was opened with the keys of
// generation g (as Select chose them). Opening with the next keys means the
// peer updated: the keys move to the next phase and Opened returns true,
// telling the core to update its sending keys too (section 6.2).
//
// It returns an error wrapping [ErrKeyUpdate] when a packet protected with
// older keys has a higher packet number than one protected with newer keys
// (section 6.4); the keys are then left unchanged.
func (a *AppKeys) Opened(g KeyGen, pn uint64) (updated bool, err error) {
	switch g {
	case GenCurrent:
		if a.highestPrev != noPN && pn < a.highestPrev {
			return false, fmt.Errorf("%w: packet %d with newer keys than packet %d", ErrKeyUpdate, pn, a.highestPrev)
		}
		a.noteCurrent(pn)
		return false, nil
	case GenPrevious:
		if a.prev == nil {
			return false, fmt.Errorf("%w: previous generation", ErrNoKeys)
		}
		if a.lowestCur != noPN && pn > a.lowestCur {
			return false, fmt.Errorf("%w: packet %d with older keys than packet %d", ErrKeyUpdate, pn, a.lowestCur)
		}
		if a.highestPrev == noPN || pn > a.highestPrev {
			a.highestPrev = pn
		}
		return false, nil
	case GenNext:
		if a.highestCur != noPN && pn < a.highestCur {
			return false, fmt.Errorf("%w: packet %d with newer keys than packet %d", ErrKeyUpdate, pn, a.highestCur)
		}
		if err := a.Update(); err != nil {
			return false, err
		}
		a.noteCurrent(pn)
		return true, nil
	}
	return false, fmt.Errorf("quic crypto: unknown key generation %d", uint8(g))
}

func (a *AppKeys) noteCurrent(pn uint64) {
	if a.lowestCur == noPN || pn < a.lowestCur {
		a.lowestCur = pn
	}
	if a.highestCur == noPN || pn > a.highestCur {
		a.highestCur = pn
	}
}

// Protect seals a short-header packet with the current keys and applies
// header protection, after setting its Key Phase bit to the current phase
// (the bit is part of the associated data). See [Keys.Protect].
func (a *AppKeys) Protect(packet []byte, pnOffset int, pn uint64) ([]byte, error) {
	if len(packet) == 0 || packet[0]&headerFormLong != 0 {
		return nil, fmt.Errorf("%w: 1-RTT packets have a short header", ErrHeaderForm)
	}
	packet[0] = WithKeyPhase(packet[0], a.phase)
	return protect(a.cur.key, a.header, packet, pnOffset, pn)
}

// DropCiphers frees the expanded cipher state of every generation's packet
// key and of the header key, keeping the keys themselves (see
// [PacketKey.DropCipher]): for AES-GCM most of the keys' memory. Each key
// builds its cipher again when it is next used. A connection drops its
// ciphers when it goes idle.
func (a *AppKeys) DropCiphers() {
	a.header.DropCipher()
	for _, g := range a.generations() {
		if g != nil && g.key != nil {
			g.key.DropCipher()
		}
	}
	a.dropped = true
}

// rebuildCiphers builds again, all together, the ciphers DropCiphers
// freed: a receiver then opens a packet that starts a key update in the
// time it opens any other (section 6.3), not one cipher build later. A
// build that fails here fails again, and is reported, when the key is
// used.
func (a *AppKeys) rebuildCiphers() {
	if !a.dropped {
		return
	}
	a.dropped = false
	_ = a.header.buildCipher()
	for _, g := range a.generations() {
		if g != nil && g.key != nil {
			_ = g.key.buildCipher()
		}
	}
}

func (a *AppKeys) generations() [3]*generation { return [3]*generation{a.prev, a.cur, a.next} }
