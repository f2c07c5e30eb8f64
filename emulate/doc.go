//go:build linux

// Package emulate runs the netsim link model in real time, between real
// sockets, so that unmodified programs (satquic, quic-go, ngtcp2, kernel
// TCP) can be measured over a modelled satellite or lossy link.
//
// The package is Linux-only: its packet threads wait in epoll at real-time
// priority, and its namespace mode builds TUN devices and veth pairs.
//
// Two modes share one engine:
//
//   - Relay (no privileges): a UDP relay listens on a local address and
//     forwards each client's datagrams to an upstream address through the
//     uplink model (netsim.Profile.Up), and the replies back through the
//     downlink model (Profile.Down). Every client source address gets its
//     own upstream socket; idle flows expire.
//   - Namespaces (root): two network namespaces, each with a TUN device
//     whose packets the emulator reads and writes, so that any IP traffic
//     (TCP, UDP, ICMP) between them crosses the link models.
//
// Each direction owns one netsim.Link behind a mutex. An ingress thread
// offers packets at their arrival time; a sender thread sleeps on a timerfd
// until the link's next due time and sends what is due. Both are OS threads
// of their own that wait in epoll rather than in Go's poller and, with
// privileges, run at nice -20, so the added delay is accurate to tens of
// microseconds rather than the millisecond of Go's timers. A packet sent
// more than LateThreshold after its due time is counted as late, so an
// emulator that cannot keep up says so in its statistics. Programs that
// embed the emulator should raise GOMAXPROCS well above the core count (the
// satquic command uses 16): a packet thread woken by the kernel needs a
// free P to run.
//
// Rates apply to IP packets, as on a real link: in relay mode each datagram
// is charged its payload plus the IP and UDP headers it would carry (28
// bytes over IPv4, 48 over IPv6). The relay appends that many bytes of its
// own bookkeeping (flow, arrival time) to the payload while it crosses the
// model, so corruption confined to the first bytes of a packet hits the
// UDP payload, as in the QUIC interop runner's corruption tests. Relay
// sockets carry no ECN marks, so a packet the model marks CE is dropped,
// as a router drops a packet that is not ECN-capable; namespace mode marks
// ECN-capable packets and drops the others.
package emulate
