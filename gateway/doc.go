// Package gateway joins the tunnel's parts into the two ends of an IP
// tunnel over CONNECT-IP (RFC 9484) on HTTP/3 with QUIC DATAGRAM frames,
// FEC on by default: the library under `satquic tunnel server` and
// `satquic tunnel client`.
//
// The server end, Server, is an http.Handler for the extended CONNECT of
// connect-ip on the default URI template's path
// (/.well-known/masque/ip/{target}/{ipproto}/). It authenticates each
// client (a bearer token, a client certificate the TLS handshake verified,
// or either), gives it one address of each IP version of its pool, and
// advertises its routes. All clients share one packet Device (the
// server's TUN interface): a demultiplexer hands each packet the device
// gives to the client session that owns its destination address, and
// merges what the sessions deliver into the device, where one
// tunnel.Forwarder runs. Each client's proxy session drops and counts
// packets whose source is not the address it was given (RFC 9484 section
// 11). Server.Serve starts QUIC and HTTP/3 with DATAGRAM frames, HTTP
// datagrams and extended CONNECT on, and FEC with the auto policy and
// repairs of at most a tenth of the bytes sent (DefaultFECMaxOverhead)
// unless the QUIC configuration says otherwise.
//
// The client end, Dial, opens the QUIC connection, sends the extended
// CONNECT with the token, waits until path MTU discovery lets an HTTP
// datagram carry an IPv6 minimum-MTU packet (1280 bytes, RFC 8200
// section 5; RFC 9484 section 7.2 has the tunnel fail otherwise), and
// starts the CONNECT-IP client: ClientTunnel gives the assigned prefixes,
// the advertised routes, the inner MTU and the Session a tunnel.Forwarder
// runs on.
//
// What one client can make the server hold is bounded. The QUIC
// listener's per-source limits apply (quic.Config's MaxHandshakes,
// MaxHandshakesPerIP, MaxConnections and MaxConnectionsPerIP: by default
// 1024 handshakes, 32 from one IPv4 address or IPv6 /64, 4096
// connections, and DefaultMaxConnectionsPerSource, 128, from one source),
// and a connection has at most
// DefaultMaxStreamsPerConn (16) request streams under way, whose headers
// and memory http3.Server's limits bound. Tunnels are bounded per client
// identity (a token of ServerConfig.Tokens, or a client certificate:
// DefaultMaxTunnelsPerClient, 8) and per source (DefaultMaxTunnelsPerSource,
// 64); a request beyond either is answered 429 and counted
// (ServerStats.OverClientLimit, OverSourceLimit), as the pool's end is
// answered 503 (PoolExhausted). The pool bounds the tunnels of all clients
// together, and a tunnel's addresses return to it when the tunnel ends:
// its stream closed or reset, or its connection gone. Each tunnel holds
// two goroutines here (the session's capsule reader and the mux's
// reader) besides its connection's; its datagrams wait in bounded queues:
// the connection's DATAGRAM queues (1024 to send, 4096 received), HTTP/3's 16 MiB of
// HTTP datagrams per connection, and the mux's 64 batches (of up to 64
// packets of one client each, read together and handed to the device's
// writer at once, in the buffers the client's QUIC connection received
// them in, which go back to it after the device write) shared by all
// clients, where a client that sends faster
// than the device takes blocks its own reader and its HTTP/3 and QUIC
// receive queues drop.
//
// A datagram that no longer fits the QUIC packet (the path's MTU fell
// after a black hole) is dropped and counted rather than ending the
// tunnel: the inner transports see one loss.
//
// docs/architecture.md places the package: above http3, connectip and
// tunnel, which it joins, and below the command.
package gateway
