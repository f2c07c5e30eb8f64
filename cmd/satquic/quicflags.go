package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/satquic/satquic/quic"
)

// quicOptions are the QUIC settings serve and get share.
type quicOptions struct {
	maxDatagram      int
	initialRTT       time.Duration
	handshakeTimeout time.Duration
	idleTimeout      time.Duration
	keepAlive        time.Duration
	cc               string
	qlogDir          string
	keyUpdate        uint64
	noCarefulResume  bool
	noAckFrequency   bool
	fec              fecOptions
}

// fecOptions are the FEC flags: on by default, since FEC only runs when
// the peer offers it too.
type fecOptions struct {
	off         bool
	policy      string
	controller  string
	maxOverhead float64
	window      int
}

func (o *quicOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&o.maxDatagram, "max-datagram-size", 1200, "largest UDP payload to send, 1200 to 9000 (1452 suits a 1500-byte MTU without tunnels)")
	fs.DurationVar(&o.initialRTT, "initial-rtt", 0, "round trip assumed before the first sample (0: 333ms; about 600ms for GEO)")
	fs.DurationVar(&o.handshakeTimeout, "handshake-timeout", 0, "give up a handshake after this long (0: 20s)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 0, "close a connection silent for this long (0: 30s)")
	fs.DurationVar(&o.keepAlive, "keep-alive", 0, "send a PING after this long without traffic (0: never)")
	fs.StringVar(&o.cc, "cc", quic.DefaultCongestionControl, "congestion controller: bbr, cubic or newreno")
	fs.StringVar(&o.qlogDir, "qlog-dir", "", "write a qlog per connection into this directory, <odcid>_<role>.sqlog (default: $QLOGDIR)")
	fs.Uint64Var(&o.keyUpdate, "key-update", 0, "update the 1-RTT keys every N packets sent (0: only before the AEAD limit)")
	fs.BoolVar(&o.noAckFrequency, "no-ack-frequency", false, "do not offer the ACK frequency extension: neither ask the peer for fewer ACKs nor follow its requests")
	fs.BoolVar(&o.noCarefulResume, "no-careful-resume", false, "do not offer Careful Resume: a server neither hands out nor resumes from path states, a client neither keeps nor returns them")
	o.fec.register(fs)
}

func (o *fecOptions) register(fs *flag.FlagSet) {
	// maxOverhead 0 is the library's default, 0.25, or the tunnel's, 0.1
	// (gateway.QUICConfig).
	o.policy, o.controller, o.maxOverhead, o.window = quic.FECAuto, quic.FECAdaptive, 0, 1024
	fs.BoolFunc("no-fec", "do not offer forward erasure correction (it runs only when both ends offer it)", func(v string) error {
		off, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("want true or false")
		}
		o.off = off
		return nil
	})
	fs.Func("fec-policy", "what packets the peer rebuilt with FEC mean to congestion control: auto (a loss only where the path shows congestion: queueing delay, ECN-CE, losses FEC did not repair; the default), signal (always a loss) or hide (never: paths that lose packets without congestion)", func(v string) error {
		if v != quic.FECAuto && v != quic.FECSignal && v != quic.FECHide {
			return fmt.Errorf("want auto, signal or hide")
		}
		o.policy = v
		return nil
	})
	fs.Func("fec-controller", "FEC redundancy controller: adaptive (default) or fixed (1 repair per 20 packets)", func(v string) error {
		if v != quic.FECAdaptive && v != quic.FECFixed {
			return fmt.Errorf("want adaptive or fixed")
		}
		o.controller = v
		return nil
	})
	fs.Func("fec-max-overhead", "cap on FEC repair bytes as a share of the source bytes sent, tail repairs included, in (0, 1) (default 0.25; satquic tunnel 0.1)", func(v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f < 1) {
			return fmt.Errorf("want a number between 0 and 1")
		}
		o.maxOverhead = f
		return nil
	})
	fs.Func("fec-window", "most packets one repair covers and the window this end decodes, 1 to 4095 (default 1024)", func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 4095 {
			return fmt.Errorf("want 1 to 4095")
		}
		o.window = n
		return nil
	})
}

// config returns the FEC configuration, nil with --no-fec.
func (o *fecOptions) config() *quic.FECConfig {
	if o.off {
		return nil
	}
	return &quic.FECConfig{Policy: o.policy, Controller: o.controller, MaxOverhead: o.maxOverhead, MaxWindow: o.window}
}

func (o *quicOptions) config() *quic.Config {
	return &quic.Config{
		MaxDatagramSize:      o.maxDatagram,
		InitialRTT:           o.initialRTT,
		HandshakeTimeout:     o.handshakeTimeout,
		MaxIdleTimeout:       o.idleTimeout,
		KeepAlivePeriod:      o.keepAlive,
		CongestionControl:    o.cc,
		QlogDir:              o.qlogDir,
		KeyUpdateInterval:    o.keyUpdate,
		DisableCarefulResume: o.noCarefulResume,
		DisableAckFrequency:  o.noAckFrequency,
		FEC:                  o.fec.config(),
	}
}
