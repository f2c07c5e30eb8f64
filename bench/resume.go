package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/satquic/satquic/internal/hq"
	"github.com/satquic/satquic/quic"
	"github.com/satquic/satquic/quic/quicsim"
)

// The resume experiment (seed 003, satquic bench resume) measures what a
// returning client gains: the download experiment's loop over stacks
// whose client comes back. A 0-RTT stack's Download makes a first
// connection, untimed, and keeps the server's session ticket and address
// validation token; the download timed is a second connection that
// resumes the session and sends its request in 0-RTT, from the start of
// that connection to the last byte. Its limit counts no handshake round
// trip (HandshakeRTTs 0). The cold stacks are the download experiment's,
// under names of their own.
//
// satquic-cold and satquic-0rtt are satquic's QUIC as the other satquic
// stacks configure it (satquicStack.config), without FEC: the resume
// profiles lose no packets; satquic-0rtt without Careful Resume, so that
// it measures 0-RTT alone. The 0-RTT server is an early Listener
// (quic.Transport.ListenEarly) that answers in 0.5-RTT. satquic-resume is
// satquic-0rtt with Careful Resume and the BDP frame (RFC 9959): its
// first connection downloads quicsim.WarmUpSize bytes, three
// bandwidth-delay products of the profile or the timed size if larger, so
// that the server measures the path at its rate; the client keeps the
// sealed state the server hands it with its ticket and returns it in the
// timed connection's first 0-RTT packet, and the server resumes from it.
// The first connection of satquic-0rtt downloads the timed size.
// quic-go-cold and quic-go-0rtt are quic-go's HTTP/3 (quicgostack.go).
func init() {
	Register("satquic-cold", func() Stack { return &satquicStack{name: "satquic-cold"} })
	Register("satquic-0rtt", func() Stack { return &satquicStack{name: "satquic-0rtt", zeroRTT: true} })
	Register("satquic-resume", func() Stack {
		return &satquicStack{name: "satquic-resume", zeroRTT: true, carefulResume: true}
	})
	Register("quic-go-cold", func() Stack { return &quicgoStack{name: "quic-go-cold"} })
	Register("quic-go-0rtt", func() Stack { return &quicgoStack{name: "quic-go-0rtt", zeroRTT: true} })
}

// ResumeStacks are the resume experiment's stacks: in real time, and
// those that run in virtual time.
const (
	ResumeRealTimeStacks = "satquic-cold,satquic-0rtt,satquic-resume,quic-go-cold,quic-go-0rtt"
	ResumeVirtualStacks  = "satquic-cold,satquic-0rtt,satquic-resume"
)

// listen starts the stack's server on pc: an early Listener that accepts
// 0-RTT for a 0-RTT stack, one that hands out connections after their
// handshake otherwise.
func (s *satquicStack) listen(pc net.PacketConn, cert Certificate) (*quic.Listener, error) {
	if !s.zeroRTT {
		return quic.Listen(pc, cert.ServerTLSConfig(hq.ALPN), s.config())
	}
	tc := cert.ServerTLSConfig(hq.ALPN)
	tc.SessionTicketsDisabled = false
	conf := s.config()
	conf.Allow0RTT = true
	return quic.ListenEarly(pc, tc, conf)
}

// downloadResumed is a 0-RTT stack's download: a first connection,
// untimed, then the timed one, which resumes its session in 0-RTT.
func (e *satquicEndpoints) downloadResumed(ctx context.Context, size int64) (Download, error) {
	tc := e.cert.ClientTLSConfig(hq.ALPN)
	tc.ClientSessionCache = tls.NewLRUClientSessionCache(1)
	conf := e.stack.config()
	conf.TokenStore = quic.NewTokenCache(1)
	first := quicsim.WarmUpSize(e.env.Profile, size, e.stack.carefulResume)
	if _, err := e.download(ctx, first, tc, conf, false); err != nil {
		return Download{}, fmt.Errorf("first connection: %w", err)
	}
	if err := waitEarlyTicket(ctx, tc); err != nil {
		return Download{}, fmt.Errorf("%s: %w", e.stack.name, err)
	}
	return e.download(ctx, size, tc, conf, true)
}

// ticketWait bounds the wait for the session ticket after the first
// download: it comes with the end of the handshake, long before.
const ticketWait = 5 * time.Second

// waitEarlyTicket waits until tc's session cache holds a ticket that
// allows 0-RTT.
func waitEarlyTicket(ctx context.Context, tc *tls.Config) error {
	deadline := time.Now().Add(ticketWait)
	for {
		if cs, ok := tc.ClientSessionCache.Get(tc.ServerName); ok && cs != nil {
			if _, st, err := cs.ResumptionState(); err == nil && st != nil && st.EarlyData {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no session ticket that allows 0-RTT within %v of the first connection", ticketWait)
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(10 * time.Millisecond):
		}
	}
}
