// Package connectip implements CONNECT-IP (RFC 9484): IP packets carried
// in HTTP Datagrams over an extended CONNECT request, with capsules that
// assign addresses and advertise routes. It runs over any Carrier (a
// request stream with its capsule byte stream and datagrams), so that it
// needs no HTTP/3 code and its tests run over an in-memory pair
// (connectip/connectiptest); an HTTP/3 request stream with datagrams is a
// Carrier.
//
// The parts:
//
//   - Codecs: capsule framing (RFC 9297 section 3.2, at most
//     MaxCapsulePayload bytes a capsule), the ADDRESS_ASSIGN,
//     ADDRESS_REQUEST and ROUTE_ADVERTISEMENT capsules with the checks of
//     RFC 9484 section 4.7 (IP version, prefix length and host bits,
//     non-zero and unrepeated Request IDs, ranges ordered and not
//     overlapping), the datagram's Context ID (section 6), and the IPv4
//     and IPv6 headers the forwarding checks read (section 7.2, walking
//     IPv6 extension headers as section 4.8 asks). No parser panics or
//     reads beyond its input; each has a fuzz target.
//   - ICMP errors the tunnel generates, with their checksums: Packet Too
//     Big (ICMPv6 type 2) and Fragmentation Needed (ICMP type 3 code 4)
//     for packets beyond the tunnel MTU (section 10.1), or beyond what a
//     carrier whose path shrank takes now (PathLimiter), so that inner
//     TCP lowers its segment size, and Time Exceeded for packets out of
//     hops.
//   - Sessions: NewClient and NewProxy return a Session that reads and
//     writes IP packets. The client asks for addresses, waits for the
//     assignment and the routes, sends only from its addresses to the
//     routes, and takes only packets for its addresses. The proxy assigns addresses (given, or from an AddressPool
//     that takes them back at Close), advertises routes, and forwards
//     only packets from the client whose source it assigned and whose
//     destination it advertised (section 11, BCP 38): the others are
//     dropped and counted in Stats by reason. Both act as routers
//     (section 7.2): the TTL or Hop Limit is decremented before
//     encapsulation, and a packet out of hops is dropped and answered
//     with ICMP Time Exceeded. WritePackets sends a batch in one call
//     of the carrier where it takes several (with the Context ID as a
//     prefix the carrier joins to each packet, where it can); GivePackets
//     hands the packets' buffers over to a carrier that takes them and
//     leaves in their place those it gives back; a client's waits for room
//     in the carrier's send queue where the carrier can, a proxy's (one
//     of many clients behind one device) never does. LendPackets reads
//     the packets that arrived together as a batch lent in the carrier's
//     own buffers where it lends them (an HTTP/3 stream does), given back
//     by the batch's Release, so that a device writes them without a
//     copy; ReadPacket copies one out. A malformed capsule ends the session (RFC
//     9297 section 3.3); a malformed datagram or IP packet is dropped and
//     counted; unknown capsule types and unregistered Context IDs are
//     skipped and counted.
//   - For the HTTP server: the default URI template's path (section 3,
//     Scope and ParseScopePath) and the checks a handler makes before it
//     accepts a tunnel: a bearer token (CheckToken) or a verified client
//     certificate (ClientCertificate).
//
// How a server uses it: its handler for the extended CONNECT with
// :protocol connect-ip checks the client (CheckToken or
// ClientCertificate; 401 or 403 otherwise), reads the scope from the path,
// answers 200 with "capsule-protocol: ?1", and calls NewProxy on the
// request stream. A client sends that request with its token and calls
// NewClient on the stream once the response is 2xx. The forwarding
// between a session and a TUN device is package tunnel.
package connectip
