package quicsim

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/satquic/satquic/netsim"
	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/coresim"
	"github.com/satquic/satquic/quic/internal/crypto"
)

// A returning client (DownloadConfig.ZeroRTT) is simulated as it happens:
// a first connection downloads the same size, and the client keeps what
// the server gave it, its session ticket (TLS, with the transport
// parameters 0-RTT needs) and a NEW_TOKEN token (RFC 9000 section 8.1.3).
// The timed connection runs afterwards on a fresh path of the profile:
// it resumes the session and sends its request in 0-RTT with the
// ClientHello (RFC 9001 section 4.6), and, its address proved by the
// token, the server answers at once in 0.5-RTT beyond the three times
// what it received that would bind it otherwise (RFC 9000 section 8.1).
//
// Both connections use the same configurations: the server's tls.Config
// holds the session ticket keys, and its address validator the token key.
// The TLS clock is fixed so that no wall clock decides whether a ticket is
// still valid; the token validator's clock runs on from the first
// connection's end.

// With DownloadConfig.CarefulResume both ends offer Careful Resume with the
// BDP frame (RFC 9959). The first connection then downloads
// WarmUpSize bytes, enough for the server's slow start to reach the path's
// rate and measure it, and hands the client its sealed path state, which
// the client keeps with its session ticket; the timed connection returns
// it in its first 0-RTT packet and the server resumes from it. The
// server's sealer key is drawn from the seed, and its clock, which dates
// the states, runs on from the first connection as the token validator's
// does.

// simClock is the TLS clock of resumable connections.
var simClock = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// warmUpGap is how long after the first connection's end the second
// starts, on the token validator's clock.
const warmUpGap = time.Second

// resumable makes the client keep session tickets and tokens and offer
// 0-RTT, and the server issue both and accept 0-RTT.
func resumable(seed uint64, client, server *core.Config) error {
	clock := func() time.Time { return simClock }
	client.TLS.ClientSessionCache = tls.NewLRUClientSessionCache(1)
	client.TLS.Time = clock
	client.Allow0RTT = true
	client.TokenStore = core.NewTokenCache(1)
	server.TLS.SessionTicketsDisabled = false
	server.TLS.Time = clock
	server.Allow0RTT = true
	var key [32]byte
	if _, err := seeded(seed, 3).Read(key[:]); err != nil {
		return fmt.Errorf("quicsim: token key: %w", err)
	}
	tokens, err := crypto.NewTokenProtector(key[:], crypto.TokenConfig{RetryLifetime: 10 * time.Second, NewTokenLifetime: time.Hour})
	if err != nil {
		return fmt.Errorf("quicsim: %w", err)
	}
	server.AddressValidator = &core.AddressValidator{Tokens: tokens, Epoch: simClock, Rand: seeded(seed, 4)}
	return nil
}

// WarmUpSize is the size of the first connection's download for a timed
// download of size bytes over p: size, as for 0-RTT alone, or, with
// carefulResume, at least three bandwidth-delay products of p's downlink
// (geo: 12.2 MB; geo-interop: 4.5 MB). The server sends its last state
// just before its last data, from the delivery rates measured until
// then: the transfer must run at the path's rate for a round trip or two
// before that, past the first round trip and slow start. With two
// products the state saved over geo is half the path's.
func WarmUpSize(p netsim.Profile, size int64, carefulResume bool) int64 {
	if !carefulResume {
		return size
	}
	return max(size, 3*int64(p.BDPBytes()))
}

// carefulResume makes both ends of a returning client's connections offer
// Careful Resume with the BDP frame, the server with a sealer whose key
// comes from the seed.
func carefulResume(cfg DownloadConfig, client, server *core.Config) error {
	if !cfg.ZeroRTT {
		return errors.New("quicsim: Careful Resume needs a returning client (ZeroRTT)")
	}
	var key [32]byte
	if _, err := seeded(cfg.Seed, 5).Read(key[:]); err != nil {
		return fmt.Errorf("quicsim: resume key: %w", err)
	}
	sealer, err := crypto.NewPathStateSealer(key[:])
	if err != nil {
		return fmt.Errorf("quicsim: %w", err)
	}
	client.CarefulResume = &core.CarefulResumeConfig{}
	server.CarefulResume = &core.CarefulResumeConfig{Sealer: sealer, Epoch: simClock}
	return nil
}

// atEpoch is the server configuration scfg for a connection whose time 0
// is epoch on the clock of the first connection: the saved states it
// opens were dated on that clock.
func atEpoch(scfg *core.Config, epoch time.Duration) *core.Config {
	if scfg.CarefulResume == nil {
		return scfg
	}
	c := *scfg
	r := *scfg.CarefulResume
	r.Epoch = r.Epoch.Add(epoch)
	c.CarefulResume = &r
	return &c
}

// warmUp runs the returning client's first connection, untimed, over the
// profile seeded afresh, and returns the token validator's clock at which
// the timed connection starts. It fails unless the client then holds a
// session ticket that allows 0-RTT.
func warmUp(cfg DownloadConfig, ccfg, scfg *core.Config) (time.Duration, error) {
	first := cfg
	first.ZeroRTT = false // a new connection, which requests after its handshake
	first.Profile = cfg.Profile.WithSeed(netsim.DeriveSeed(cfg.Profile.Down.Seed, warmUpStream))
	first.Seed = netsim.DeriveSeed(cfg.Seed, warmUpStream)
	w, err := newWorld(first, ccfg, scfg, 0)
	if err != nil {
		return 0, err
	}
	size := WarmUpSize(cfg.Profile, cfg.Size, cfg.CarefulResume)
	cl := &client{endpoint: coresim.NewClient(w.cconn), conn: w.cconn, size: size, buf: make([]byte, 64<<10)}
	cl.App = cl.step
	// The ticket and the token come after the handshake; the client
	// closes once the body arrived, long after on any path. The path
	// state comes in BDP frames during the transfer, the last with its
	// last data.
	runErr := w.run(cl, func() bool { return (cl.done && w.cconn.Closed()) || cl.err != nil || w.sv.err != nil })
	switch {
	case cl.err != nil:
		return 0, fmt.Errorf("quicsim: first connection: %w", cl.err)
	case w.sv.err != nil:
		return 0, fmt.Errorf("quicsim: first connection: %w", w.sv.err)
	case runErr != nil:
		return 0, fmt.Errorf("quicsim: first connection: %w", runErr)
	}
	if !earlyDataTicket(ccfg.TLS) {
		return 0, fmt.Errorf("quicsim: no session ticket that allows 0-RTT after the first connection")
	}
	return w.n.Now() + warmUpGap, nil
}

// warmUpStream derives the first connection's seeds from the run's.
const warmUpStream = 0x7a2

// earlyDataTicket reports whether the client's cache holds a ticket of
// the server that allows 0-RTT.
func earlyDataTicket(tc *tls.Config) bool {
	cs, ok := tc.ClientSessionCache.Get(serverName)
	if !ok || cs == nil {
		return false
	}
	_, st, err := cs.ResumptionState()
	return err == nil && st != nil && st.EarlyData
}
