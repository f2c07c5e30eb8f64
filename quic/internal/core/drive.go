package core

import (
	"net/netip"
	"time"

	"github.com/satquic/satquic/internal/ecn"
	"github.com/satquic/satquic/quic/internal/dgram"
	"github.com/satquic/satquic/quic/internal/wire"
)

// Datagram is a UDP datagram between the connection and its peer, with the
// ECN codepoint of its IP header: the input of HandleDatagram and Step, the
// output of NextDatagram. It is package dgram's, so that a driver that
// cannot import core (coresim, which core's own tests use) names the same
// type.
type Datagram = dgram.Datagram

// Step is a driver's input half of one turn: it hands the connection the
// datagrams that arrived by now, in their order (HandleDatagram), then runs
// the timers due at now (HandleTimer). The output half follows: the
// application acts on PollEvent's events, NextDatagram is called until it
// reports false, and the driver waits until NextTimer. The output half is
// separate so that a driver can send a batch of datagrams between two
// NextDatagram calls, with the connection free for the application
// meanwhile.
func (c *Conn) Step(now time.Duration, in []Datagram) {
	for i := range in {
		c.HandleDatagram(now, in[i])
	}
	c.HandleTimer(now)
}

// NextDatagram builds the next datagram to send at now, appending its
// payload to buf[:0] (buf may be nil), and reports false when there is
// nothing to send now. The datagram goes to its Addr (RemoteAddr, or
// another address of the peer for a PATH_RESPONSE, path_send.go) with its
// ECN codepoint: ECT(0) while ECN is tested or validated on the path,
// Not-ECT otherwise (a driver that cannot set codepoints sets
// Config.DisableECN). The driver calls again until it reports false, then
// waits until NextTimer.
func (c *Conn) NextDatagram(now time.Duration, buf []byte) (Datagram, bool) {
	c.checkController()
	c.ecn.last = ecn.NotECT
	c.path.out = netip.AddrPort{}
	data, ok := c.buildDatagram(now, buf)
	// Sending moves Careful Resume's phases too, and its jump raises the
	// send buffers' limit.
	c.notePhase(now)
	c.streams.wakeWriters()
	if !ok {
		return Datagram{}, false
	}
	return Datagram{Addr: c.path.dest(c.remote), Data: data, ECN: c.ecn.last}, true
}

// checkController closes the connection with INTERNAL_ERROR once an
// application's congestion controller panicked (recovery.ControllerError):
// the sender no longer calls it, and a connection whose controller is in
// an unknown state should not go on at the minimum window unnoticed. It
// reports whether the controller failed.
func (c *Conn) checkController() bool {
	err := c.sender.ControllerError()
	if err != nil {
		c.closeLocal(transportError(wire.CodeInternalError, 0, "%v", err))
	}
	return err != nil
}
