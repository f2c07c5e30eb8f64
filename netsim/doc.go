// Package netsim models the network paths satquic is measured on: loss
// models (subpackage loss), a one-direction link model, a table of named
// network profiles, a discrete-event simulator in virtual time and an
// in-memory net.PacketConn for goroutine code under testing/synctest.
//
// # Link
//
// A Link is one direction of a path and a pure state machine: every call
// takes the time, as a time.Duration since an epoch the caller chooses, and
// the link never reads a clock or starts a goroutine. The simulator drives it
// in virtual time; the emulator (package emulate) drives it with
// time.Since(start). Offer puts a packet on the link, Next tells when the
// next packet is due out, and Deliver hands out the packets due by a time.
//
// Each offered packet goes through the steps of Linux netem, in its order:
//
//  1. MTU: a packet larger than MTU is dropped.
//  2. Duplicate: with probability Duplicate a copy is made; each copy goes
//     through the following steps on its own.
//  3. Outage: a packet offered while the link is down is lost.
//  4. Loss: the loss model (a netsim/loss spec) may drop it.
//  5. Corrupt: with probability Corrupt one byte in the first CorruptRegion
//     bytes is replaced with a different value.
//  6. Queue: if the serializer is busy the packet waits in a drop-tail queue
//     limited in bytes (default one bandwidth-delay product, at least 64 kB)
//     and optionally in packets. The packet being serialized has left the
//     queue. A packet that finds more than ECNThreshold bytes waiting ahead
//     of it is marked CE.
//  7. Serialization: at the rate in force when it starts (RateBps, changed
//     by RateSchedule), or at the delivery opportunities of a Mahimahi trace.
//  8. Propagation: the delay in force when the last bit leaves (Delay,
//     changed by DelaySteps), plus uniform jitter in [-Jitter, +Jitter].
//     Unless Reorder is set, a packet never arrives before one sent ahead of
//     it.
//
// So a 1500-byte packet offered at 0 to an idle 10 Mbit/s link with 15 ms of
// delay is due at exactly 16.2 ms, and back-to-back packets arrive 1.2 ms
// apart. The queue, serializer and in-flight packets use growable rings that
// are reused, so a link in steady state does not allocate per packet.
//
// Randomness (loss, jitter, duplication, corruption) comes from PCG sources
// seeded with LinkConfig.Seed: a link's behaviour is a function of its
// configuration and the sequence of calls. OfferTagged carries an opaque tag
// with a packet (the simulators put addresses there, leaving the bytes
// alone); Stats counts every packet's fate and the queue delay percentiles.
//
// # Profiles
//
// Profiles is the table of named paths (seed-ifc, starlink, geo, geo-large,
// geo-gbit, geo-lossy, geo-interop, geo-interop-lossy, ifc-geo, p2p), the one place
// they are defined (docs/architecture.md, "Network profiles"), each a Down
// (server to client) and an Up LinkConfig; LookupProfile finds one by name
// and WithSeed seeds both directions.
//
// # Simulator
//
// Network is a discrete-event simulation in virtual time. Endpoints are
// sans-IO state machines bound to addresses (Attach); paths join node
// addresses with a Link per direction (AddPath, AddProfilePath). The runner
// keeps a heap of events (link deliveries and endpoint timers), jumps from
// one to the next, feeds arriving datagrams to Endpoint.Receive and then
// polls the endpoint for what it sends and its next timer. Events at equal
// times run in the order they were scheduled, and every link is seeded from
// NetworkConfig.Seed (DeriveSeed), so a run is reproducible from its seed.
// Run(until) advances to a time; RunUntil(done, limit) runs until a
// condition holds (ErrLimit, ErrIdle and ErrSpin report the ways it may
// not). A 50 Mbit/s, 650 ms RTT download runs over a hundred simulated
// seconds per CPU second.
//
// Datagrams carry the ECN codepoint they are sent with (Datagram.ECN). A
// link's queue above ECNThreshold turns ECT(0) and ECT(1) into CE and
// leaves Not-ECT alone (RFC 3168 section 5); a BleachECN link clears the
// field. An endpoint that implements ECNEndpoint learns the codepoint each
// datagram arrived with, as a socket reading IP_TOS does.
//
// # In-memory sockets
//
// Subpackage memnet provides net.PacketConns joined by the same Links in
// process time, for goroutine code under testing/synctest, where that time
// is virtual and arrival times can be asserted exactly. It lives apart so
// that this package stays free of clock reads.
package netsim
