package gateway

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/satquic/satquic/http3"
	"github.com/satquic/satquic/quic"
)

// DefaultKeepAlive is the keep-alive period of a tunnel's QUIC connection
// when its configuration sets none: a tunnel may be quiet for long, and
// the connection, like the NAT bindings on its path, must outlive the
// silence (the default idle timeout is 30 s).
const DefaultKeepAlive = 10 * time.Second

// The DATAGRAM queues of a tunnel's connection when its configuration
// sets none, where the QUIC default of 256 suits media. The send queue
// holds 1024 full-size packets, about 12 ms of 1 Gbit/s: a client end
// waits for room in it (tunnel.Config.WaitWhenFull), so a deeper one
// would only add delay in front of the path. Nothing holds the peer back
// when the receive queue is full (DATAGRAM frames have no flow control),
// so a packet that arrives then is lost to the inner transport: that
// queue must outlast the pauses of the goroutines that drain it on a busy
// machine, which 1024 packets (6 ms at 2 Gbit/s) did not, and inner TCP
// retransmitted what it dropped; 4096 packets are about 24 ms of 2
// Gbit/s. Memory is taken only by what waits.
const (
	tunnelDatagramSendQueue    = 1024
	tunnelDatagramReceiveQueue = 4096
)

// DefaultFECMaxOverhead is the FEC overhead cap of a tunnel's connection
// when its configuration sets none (quic.FECConfig.MaxOverhead): repairs
// of at most a tenth of the bytes sent, where the QUIC default of a
// quarter suits a transfer that buys its tail's speed with more. Each
// end of the tunnel holds to it in what it sends.
const DefaultFECMaxOverhead = 0.1

// QUICConfig returns the QUIC configuration of a tunnel's connection: a
// copy of c (nil: the zero Config with FEC on under the auto policy),
// with DATAGRAM frames on, and the FEC overhead cap, keep-alive and
// datagram queues a tunnel needs where c leaves them zero.
func QUICConfig(c *quic.Config) *quic.Config {
	var q quic.Config
	if c != nil {
		q = *c
	} else {
		q.FEC = &quic.FECConfig{Policy: quic.FECAuto}
	}
	if q.FEC != nil && q.FEC.MaxOverhead == 0 {
		fec := *q.FEC
		fec.MaxOverhead = DefaultFECMaxOverhead
		q.FEC = &fec
	}
	q.EnableDatagrams = true
	if q.KeepAlivePeriod == 0 {
		q.KeepAlivePeriod = DefaultKeepAlive
	}
	if q.DatagramSendQueue == 0 {
		q.DatagramSendQueue = tunnelDatagramSendQueue
	}
	if q.DatagramReceiveQueue == 0 {
		q.DatagramReceiveQueue = tunnelDatagramReceiveQueue
	}
	return &q
}

// ListenAndServe listens on the UDP address addr and runs Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string, tlsConf *tls.Config, qconf *quic.Config) error {
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	return s.Serve(ctx, pc, tlsConf, qconf, nil)
}

// Serve runs the server on pc until ctx is done or the device fails: QUIC
// with QUICConfig(qconf) (and DefaultMaxStreamsPerConn request streams
// per connection, DefaultMaxConnectionsPerSource connections per source,
// where qconf sets no MaxIncomingStreams or MaxConnectionsPerIP), HTTP/3 with extended CONNECT and HTTP datagrams
// (RFC 9220, RFC 9297), and the device's forwarder. ready, if set, is
// called once it listens. It returns nil after ctx is done; the device,
// every tunnel and pc are closed by then.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn, tlsConf *tls.Config, qconf *quic.Config, ready func(net.Addr)) error {
	qc := QUICConfig(qconf)
	if qc.MaxIncomingStreams == 0 {
		qc.MaxIncomingStreams = DefaultMaxStreamsPerConn
	}
	if qc.MaxConnectionsPerIP == 0 {
		qc.MaxConnectionsPerIP = DefaultMaxConnectionsPerSource
	}
	h3 := &http3.Server{
		Handler:               s,
		TLSConfig:             tlsConf,
		QUICConfig:            qc,
		EnableExtendedConnect: true,
		EnableDatagrams:       true,
		ErrorLog:              s.cfg.ErrorLog,
		ConnContext:           withConn,
	}
	s.h3.Store(h3)
	t := &quic.Transport{Conn: pc, StatelessResetKey: s.cfg.StatelessResetKey, TokenKey: s.cfg.TokenKey}
	listen := t.Listen
	if qc.Allow0RTT {
		listen = t.ListenEarly
	}
	l, err := listen(http3.ConfigureTLS(tlsConf), qc)
	if err != nil {
		_ = t.Close()
		_ = pc.Close()
		return err
	}
	defer func() {
		_ = l.Close()
		_ = t.Close()
		_ = pc.Close()
	}()
	if ready != nil {
		ready(pc.LocalAddr())
	}
	served := make(chan error, 1)
	go func() { served <- h3.Serve(l) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	forwarded := make(chan error, 1)
	go func() { forwarded <- s.fwd.Run(ctx) }()
	var runErr error
	select {
	case runErr = <-forwarded:
		cancel()
		_ = h3.Close()
		<-served
	case err := <-served:
		cancel()
		<-forwarded
		if !errors.Is(err, http3.ErrServerClosed) {
			runErr = err
		}
	}
	_ = h3.Close()
	return runErr
}
