package main

import (
	"flag"
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
}

func (o *quicOptions) register(fs *flag.FlagSet) {
	fs.IntVar(&o.maxDatagram, "max-datagram-size", 1200, "largest UDP payload to send, 1200 to 9000 (1452 suits a 1500-byte MTU without tunnels)")
	fs.DurationVar(&o.initialRTT, "initial-rtt", 0, "round trip assumed before the first sample (0: 333ms; about 600ms for GEO)")
	fs.DurationVar(&o.handshakeTimeout, "handshake-timeout", 0, "give up a handshake after this long (0: 20s)")
	fs.DurationVar(&o.idleTimeout, "idle-timeout", 0, "close a connection silent for this long (0: 30s)")
	fs.DurationVar(&o.keepAlive, "keep-alive", 0, "send a PING after this long without traffic (0: never)")
	fs.StringVar(&o.cc, "cc", quic.CUBIC, "congestion controller: cubic or newreno")
	fs.StringVar(&o.qlogDir, "qlog-dir", "", "write a qlog per connection into this directory, <odcid>_<role>.sqlog (default: $QLOGDIR)")
	fs.Uint64Var(&o.keyUpdate, "key-update", 0, "update the 1-RTT keys every N packets sent (0: only before the AEAD limit)")
}

func (o *quicOptions) config() *quic.Config {
	return &quic.Config{
		MaxDatagramSize:   o.maxDatagram,
		InitialRTT:        o.initialRTT,
		HandshakeTimeout:  o.handshakeTimeout,
		MaxIdleTimeout:    o.idleTimeout,
		KeepAlivePeriod:   o.keepAlive,
		CongestionControl: o.cc,
		QlogDir:           o.qlogDir,
		KeyUpdateInterval: o.keyUpdate,
	}
}
