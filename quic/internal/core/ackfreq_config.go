package core

import (
	"fmt"
	"time"
)

// AckFrequencyConfig configures the ACK frequency extension
// (draft-ietf-quic-ack-frequency-14, ackfreq.go): the receiver's
// min_ack_delay and the sender's policy. Zero fields take their defaults.
type AckFrequencyConfig struct {
	// MinAckDelay is the min_ack_delay this endpoint advertises: the
	// shortest delay its timers hold an ACK for (default 1 ms). A peer
	// may not ask for less (draft section 3).
	MinAckDelay time.Duration
	// AcksPerRTT is how many ACKs per round trip the sender asks for
	// once its congestion window is large: the ack-eliciting threshold
	// it requests is the window in packets divided by this (default
	// 128; see ackfreq_send.go for the figures).
	AcksPerRTT int
	// MaxPacketsPerAck caps the packets per ACK requested (default 256).
	MaxPacketsPerAck int
	// MaxRequestedAckDelay caps the max ack delay requested, which is
	// otherwise an eighth of the smoothed RTT (default 100 ms).
	MaxRequestedAckDelay time.Duration
	// NoRequests honours the peer's requests but sends none: the peer
	// then acknowledges as RFC 9000 section 13.2 (or its own policy)
	// has it.
	NoRequests bool
}

// Defaults of AckFrequencyConfig.
const (
	DefaultMinAckDelay          = time.Millisecond
	DefaultAcksPerRTT           = 128
	DefaultMaxPacketsPerAck     = 256
	DefaultMaxRequestedAckDelay = 100 * time.Millisecond
)

// withDefaults returns a copy with defaults filled in, or an error naming
// an invalid field; maxAckDelay is the endpoint's own max_ack_delay, which
// min_ack_delay may not exceed (draft section 3). A nil config stays nil.
func (c *AckFrequencyConfig) withDefaults(maxAckDelay time.Duration) (*AckFrequencyConfig, error) {
	if c == nil {
		return nil, nil
	}
	d := *c
	setDefault(&d.MinAckDelay, DefaultMinAckDelay)
	setDefault(&d.AcksPerRTT, DefaultAcksPerRTT)
	setDefault(&d.MaxPacketsPerAck, DefaultMaxPacketsPerAck)
	setDefault(&d.MaxRequestedAckDelay, DefaultMaxRequestedAckDelay)
	switch {
	case d.MinAckDelay < 0 || d.MinAckDelay > maxAckDelay:
		return nil, fmt.Errorf("%w: AckFrequency.MinAckDelay %v out of [0, MaxAckDelay %v]", ErrConfig, d.MinAckDelay, maxAckDelay)
	case d.AcksPerRTT < 1 || d.MaxPacketsPerAck < 2:
		return nil, fmt.Errorf("%w: AckFrequency.AcksPerRTT below 1 or MaxPacketsPerAck below 2", ErrConfig)
	case d.MaxRequestedAckDelay < time.Millisecond || d.MaxRequestedAckDelay >= (1<<14)*time.Millisecond:
		return nil, fmt.Errorf("%w: AckFrequency.MaxRequestedAckDelay %v out of [1 ms, 2^14 ms)", ErrConfig, d.MaxRequestedAckDelay)
	}
	return &d, nil
}
