package quic

import (
	"crypto/rand"
	"fmt"
	"time"

	"github.com/satquic/satquic/quic/internal/core"
	"github.com/satquic/satquic/quic/internal/crypto"
)

// ResumeKey seals the path states a server hands its clients for Careful
// Resume (Config.ResumeKey). Servers of a farm share one key, so that a
// client resumes with whichever of them it reaches next, and none needs a
// shared database; keep it across restarts so that the states given out
// stay valid.
type ResumeKey [crypto.PathStateKeyLen]byte

// CarefulResumeStats are a connection's Careful Resume state and BDP frame
// counters (Config.DisableCarefulResume).
type CarefulResumeStats struct {
	// Negotiated: both endpoints offered the BDP frame.
	Negotiated bool
	// Phase is the Careful Resume phase of what this endpoint sends (RFC
	// 9959): "off" (never started), "reconnaissance", "unvalidated",
	// "validating", "safe_retreat" or "normal"; PhaseChanges how many
	// times it changed.
	Phase        string
	PhaseChanges uint64
	// SavedCongestionWindow and SavedRTT are the saved state a server
	// resumed this connection from (bytes per round trip, minimum RTT),
	// zero if none.
	SavedCongestionWindow int64
	SavedRTT              time.Duration
	// BDPFramesSent counts the path states a server sent, or the one a
	// client returned; BDPFramesReceived those received. A server counts
	// the returned states it accepted and those it ignored, by reason.
	BDPFramesSent, BDPFramesReceived, BDPFramesAccepted uint64
	Rejected                                            BDPRejections
}

// BDPRejections count the returned path states a server ignored, starting
// the connection as usual.
type BDPRejections struct {
	// Invalid: forged, altered, malformed or sealed with another key.
	Invalid uint64
	// Version: of a format this server does not read.
	Version uint64
	// Expired: past its lifetime (one hour).
	Expired uint64
	// Address: issued to another client address (IPv4) or /64 (IPv6).
	Address uint64
	// Unused: valid, but the connection could no longer resume from it.
	Unused uint64
	// Disabled: this server has Careful Resume off.
	Disabled uint64
}

func carefulResumeStats(s *core.Stats) CarefulResumeStats {
	r := s.CarefulResume
	return CarefulResumeStats{
		Negotiated:            r.Negotiated,
		Phase:                 r.Phase.String(),
		PhaseChanges:          r.PhaseChanges,
		SavedCongestionWindow: r.Resumed.SavedCwnd,
		SavedRTT:              r.Resumed.SavedRTT,
		BDPFramesSent:         r.BDPFramesSent,
		BDPFramesReceived:     r.BDPFramesReceived,
		BDPFramesAccepted:     r.BDPFramesAccepted,
		Rejected:              BDPRejections(r.Rejected),
	}
}

// carefulResume is the core's Careful Resume configuration for c, without
// its server half (serverCarefulResume); nil when it is disabled.
func (c *Config) carefulResume() *core.CarefulResumeConfig {
	if c.DisableCarefulResume {
		return nil
	}
	return &core.CarefulResumeConfig{}
}

// resumeKey is Config.ResumeKey, nil for a nil Config.
func (c *Config) resumeKey() *ResumeKey {
	if c == nil {
		return nil
	}
	return c.ResumeKey
}

// serverCarefulResume completes a server's Careful Resume configuration cc:
// the sealer of Config.ResumeKey, or of a key drawn for this Listener, and
// the wall-clock time of the Transport's epoch.
func serverCarefulResume(cc *core.CarefulResumeConfig, key *ResumeKey, epoch time.Time) error {
	if cc == nil {
		return nil
	}
	if key == nil {
		key = new(ResumeKey)
		if _, err := rand.Read(key[:]); err != nil {
			return fmt.Errorf("quic: drawing a resume key: %w", err)
		}
	}
	s, err := crypto.NewPathStateSealer(key[:])
	if err != nil {
		return fmt.Errorf("quic: %w", err)
	}
	cc.Sealer, cc.Epoch = s, epoch
	return nil
}
