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
// loss they react to rather than a stall. A tunnel's client end, whose one
// session carries only its own device's packets, waits instead
// (Config.WaitWhenFull): its device's queue then holds local TCP back
// without loss, as a NIC's full ring does. The sender takes packets from
// the queue and gives them to the session, which applies CONNECT-IP's
// checks (addresses, routes, tunnel MTU, hop limit); the ICMP errors the
// session returns (Packet Too Big for a packet beyond the tunnel's inner
// MTU, so that inner TCP lowers its segment size; Time Exceeded) are
// written back into the device. The receiver writes what the session
// delivers into the device. Stats counts each step, JSON-friendly.
//
// With Config.NextSession a Forwarder outlives its session, as a tunnel
// client that reconnects needs: the device reader runs for the whole Run,
// and each session in turn has its sender and receiver until it fails;
// the failed session is closed, the packets still queued for it are
// dropped, and NextSession is asked for the next one (it redials, with
// backoff, for as long as it takes). Meanwhile the device stays open, its
// interface, addresses and routes in place, and what it gives is dropped
// and counted (Stats.DownDrops), as a link that is down drops it: the
// reader never waits for a session, so local senders see loss and
// retransmit once the tunnel is back. Each new session's batch, give and
// lend interfaces are looked up as the first one's are.
//
// NewMulti spreads the device's packets over several sessions (tunnels on
// as many connections, so that more than one core encrypts and codes),
// with a queue, a sender and a receiver each. A packet goes to the
// session its flow hashes to (addresses, protocol and ports, the same in
// both directions, under a seed of the Forwarder's own), so that each
// flow's packets stay in order.
//
// Packets move in batches where both sides allow: a BatchDevice reads
// several packets per call and writes several per call, a Session that
// takes batches (connectip.Session.WritePackets) is given every packet
// waiting in the lane's queue at once, so that its QUIC connection packs
// and sends them together; one that takes the packets' buffers too
// (connectip.Session.GivePackets) keeps them until they are sent and
// gives back its own in exchange, which the device's next reads fill, so
// that a packet is not copied between the device read and its QUIC
// packet; and what a Session has received (TryReadPacket)
// is written into the device with the packet that woke the receiver. A
// Session that lends what it received (connectip.Session.LendPackets,
// and the gateway's demultiplexer) has its packets written into the
// device straight from the buffers its QUIC connection received them in,
// given back after the write: no copy between the decrypted packet and
// the device's write buffer.
//
// OpenTUN (Linux) creates a TUN interface, sets its MTU, addresses and
// routes with iproute2's ip command, and is a BatchDevice. Unless told
// otherwise it asks the kernel for offloads (IFF_VNET_HDR with
// TUNSETOFFLOAD: checksums, TSO, and USO where the kernel has it), so
// that local TCP hands it 64 kB super-packets, which it cuts into packets
// of the MTU as a NIC would (the segmenter), and it joins the consecutive
// segments of a TCP flow in a batch written to it into one GSO packet (as
// GRO does), each segment's checksum checked first; a kernel that refuses
// the offloads leaves the interface without them, as OffloadStats says.
//
// Memory is bounded: per session, QueueLen+64 packet buffers of the
// device's MTU (its queue and the batch its sender holds), and, for a
// Session that does not lend its packets, an arena of 64 of them plus one
// 64 kB packet for the batches written to the device;
// per Forwarder, 64 more buffers for the device reads; per TUN with
// offloads, a 64 kB frame to read and one to write. With the defaults and
// a 1500-byte MTU that is about 2 MB for a Forwarder over one session.
//
// Package gateway joins
// a TUN device, an HTTP/3 CONNECT-IP request and a Forwarder; `satquic
// tunnel` runs it.
package tunnel
