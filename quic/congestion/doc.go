// Package congestion is the interface of a congestion controller that an
// application writes and plugs into a satquic connection
// (quic.Config.NewCongestionController). satquic's own controllers, CUBIC,
// NewReno and BBR, are chosen by name (quic.Config.CongestionControl); this
// package is for anything else: an experiment, a controller tuned for one
// network, a port of another stack's algorithm.
//
// # Who does what
//
// The connection owns everything about packets: bytes in flight, loss
// detection (RFC 9002 section 6), the RTT estimator (section 5), the
// delivery-rate sampler (draft-cheng-iccrg-delivery-rate-estimation) and
// the pacer. It tells the Controller what happened, and asks it two
// things: how many bytes may be in flight (Window) and how fast to
// release them (PacingRate).
//
//   - OnPacketSent: a packet that counts toward bytes in flight left.
//   - OnAck: an ACK frame newly acknowledged packets (AckEvent: the packets,
//     the bytes in flight before and after, the RTT estimates, a
//     delivery-rate sample).
//   - OnCongestionEvent: packets were declared lost, the peer reported ECN
//     Congestion Experienced marks, or the peer rebuilt lost packets with
//     forward erasure correction and the FEC policy counts them as
//     congestion (CongestionEvent, with its Cause and whether the losses
//     establish persistent congestion, RFC 9002 section 7.6).
//   - SetMaxDatagramSize: path MTU discovery changed the packet size.
//   - State: the controller's name and phase for ConnectionStats and qlog.
//
// # Time
//
// Every method that depends on time is given it, as a time.Duration since
// an epoch the connection's driver chose (the quic.Transport's start in
// real time, the simulation's start in virtual time): only differences
// between times mean anything. A Controller must never read a clock
// (time.Now, timers, sleeping). satquic runs the very same connection code
// in real time over sockets and in virtual time in its simulator, where a
// minute of a 600 ms satellite path takes a fraction of a second and a run
// replays exactly from its seed; a controller that read the clock would
// see wall time there, not the simulated time, and break both. For the
// same reason a Controller draws randomness, if it needs any, from a
// source seeded when it is made.
//
// # Calls
//
// A Controller belongs to one connection: NewCongestionController is
// called once per connection. Its methods are called from that
// connection's goroutine, one at a time, never concurrently (State may be
// called from the goroutine that asks for the connection's Stats, with
// the connection locked), so a Controller needs no lock. They must return
// quickly and never block: they run while the connection sends and
// receives. The events' slices alias the connection's buffers and are
// valid only during the call; a Controller that keeps anything copies it.
// The connection allocates nothing per ACK to call a Controller.
//
// # A controller that misbehaves
//
// The connection guards itself against a Controller's answers:
//
//   - Window is floored at the minimum window (RFC 9002 section 7.2: two
//     datagrams of the current size) and capped at
//     quic.Config.MaxCongestionWindow, so a window of zero or less cannot
//     stall the connection, and a huge one cannot outgrow the memory the
//     configuration allows.
//   - A PacingRate of zero asks the connection to pace at 1.25 x window /
//     smoothed RTT (RFC 9002 section 7.7), which suits a window-based
//     controller. A rate below the minimum window per smoothed RTT is
//     raised to it, so a connection always progresses; a very large rate
//     lets each window go out as a burst (pacing off in effect).
//   - A panic in any method is recovered. The Controller is not called
//     again, and the connection closes with an INTERNAL_ERROR transport
//     error whose reason names the panic: a controller in an unknown state
//     cannot be trusted with the network.
//
// Probe packets after a probe timeout are sent whatever the window says
// (RFC 9002 section 7.5). Careful Resume (RFC 9959) applies only to the
// built-in controllers: a connection with a custom Controller starts from
// its Window.
package congestion
