// Package tunnel is the forwarding core of an IP tunnel over CONNECT-IP:
// it moves IP packets between a Device (a TUN interface, or anything that
// reads and writes whole IP packets) and a CONNECT-IP session, in both
// directions, independently of HTTP/3 and of the operating system.
//
// A Forwarder runs a device reader, and a sender and a receiver per
// session. The device reader never blocks on the transport: it puts each
// packet in a bounded queue, and when the
// queue is full (the transport cannot keep up: congestion, a slow coding
// path) it drops the packet and counts it, as a router's full interface
// queue does, so the device keeps being read and the inner transports see
// loss they react to rather than a stall. The sender takes packets from
// the queue and gives them to the session, which applies CONNECT-IP's
// checks (addresses, routes, tunnel MTU, hop limit); the ICMP errors the
// session returns (Packet Too Big for a packet beyond the tunnel's inner
// MTU, so that inner TCP lowers its segment size; Time Exceeded) are
// written back into the device. The receiver writes what the session
// delivers into the device. Stats counts each step, JSON-friendly.
//
// NewMulti spreads the device's packets over several sessions (tunnels on
// as many connections, so that more than one core encrypts and codes),
// with a queue, a sender and a receiver each. A packet goes to the
// session its flow hashes to (addresses, protocol and ports, the same in
// both directions, under a seed of the Forwarder's own), so that each
// flow's packets stay in order.
//
// OpenTUN (Linux) creates a TUN interface, sets its MTU, addresses and
// routes with iproute2's ip command, and is a Device. Package gateway joins
// a TUN device, an HTTP/3 CONNECT-IP request and a Forwarder; `satquic
// tunnel` runs it.
package tunnel
