// Package quic is satquic's QUIC transport (RFC 9000, 9001, 9002, 9369) for
// applications: a Transport over a UDP socket, Listeners and Dial, and
// connections with streams, in the shape quic-go users know.
//
// A Transport owns a socket. One goroutine reads it in batches
// (recvmmsg and GRO on Linux) and routes each datagram by its Destination
// Connection ID to a connection, so one socket carries a Listener and any
// number of outgoing connections; a Stateless Reset, which carries no
// connection ID of ours, goes by the peer's reset token it ends with to
// the one connection that holds it (transport_resets.go). Each
// connection has a goroutine that owns its sans-IO core (package
// internal/core): it feeds the core the
// datagrams and the time, runs its timers in real time and sends its
// datagrams in batches (sendmmsg, and GSO for runs of equal-sized ones).
// When its next timer is far away (100 ms or more: an idle timeout, a
// keep-alive), it received and sent nothing for as long, and its
// handshake is confirmed or a second old, the goroutine parks: it frees what the core can build again
// (core.Conn.ReleaseIdle) and returns, and the next datagram, application
// call, timer or the Transport closing starts it again, so that an idle
// connection holds no goroutine (conn_park.go). Nor does one in its closing
// or draining period (RFC 9000 section 10.2): the reader answers it and
// the Transport ends it (transport_drain.go).
// The application's Read and Write calls use the core directly under the
// connection's mutex and block on the core's stream events. ListenAddr,
// DialAddr, Listen and Dial make a Transport for one Listener or one
// connection.
//
// A server that needs more than one core to receive uses ListenMulti: one
// Transport over a group of sockets bound to one address with
// SO_REUSEPORT, a reading goroutine each, and a classic BPF program on the
// group that takes every datagram to the socket its connection belongs
// to, named by one octet of the connection IDs the Transport issues.
// Transport.LoadBalancer makes those IDs QUIC-LB's (QUICLB), so that a
// load balancer in front of many servers routes each connection to its
// own.
//
// Config holds every constant derived from time (initial RTT, handshake
// and idle timeouts, max ACK delay, keep-alive) and the flow control
// windows, which tune themselves from small initial values up to 160 MiB
// per stream and 256 MiB per connection: a satellite path with a 650 ms
// round trip at 1 Gbit/s works with the zero Config.
//
// Errors: a closed connection reports an *ApplicationError (CloseWithError,
// from either side), a *TransportError (a protocol or TLS error), an
// *IdleTimeoutError or *HandshakeTimeoutError (net.Errors whose Timeout is
// true), a *StatelessResetError or ErrTransportClosed. Streams report a
// *StreamError when reset or stopped, and os.ErrDeadlineExceeded at their
// deadlines.
//
// Handshakes: a client resumes a session when its tls.Config has a
// ClientSessionCache, and with DialEarly sends its first data in 0-RTT
// packets where the server allows it (Config.Allow0RTT, off by default:
// 0-RTT data can be replayed). A Listener from ListenEarly hands out a
// connection before its handshake completes, so that the application
// answers 0-RTT requests in 0.5-RTT, a round trip earlier; the handshake
// still counts against the Listener's limits until it completes
// (Conn.HandshakeComplete). A Listener validates client addresses with
// Retry packets when Config.RequireAddressValidation says so, or when too
// many handshakes with unvalidated clients are in progress, and gives
// clients NEW_TOKEN tokens for their next connection (Config.TokenStore).
// It bounds the handshakes and connections it holds, in total and per
// source address (Config.MaxHandshakes, MaxConnections and their PerIP
// forms): beyond them a new client is refused, or takes the place of the
// handshake silent the longest, of a connection long idle, or of the
// oldest handshake once it has lasted four initial probe timeouts, busy
// or not. Listener.Stats counts the refusals by limit, the evictions and
// the Retry packets sent.
// Config.Versions negotiates the QUIC version (RFC 9368), and
// Config.QlogDir, Config.Tracer or the QLOGDIR environment variable
// write each connection's qlog.
//
// ECN (RFC 9000 section 13.4) is on where the socket reads and sets the
// codepoint (Linux): datagrams go out ECT(0) once the path and the peer
// proved they carry and count the marks, CE marks slow the sender as a
// loss would, and a path that clears or drops marks turns marking off
// (Config.DisableECN, ConnectionStats.ECN).
//
// Congestion control: Config.CongestionControl chooses BBR (the default),
// CUBIC or NewReno; Config.NewCongestionController plugs in an application's
// own controller (package quic/congestion).
//
// Path MTU discovery (RFC 9000 section 14.3, RFC 8899) starts every
// connection at Config.MaxDatagramSize (1200 bytes) and, once the
// handshake is confirmed, probes up to Config.MaxProbeDatagramSize (1452)
// with PING and PADDING packets whose loss is not taken for congestion;
// a path that later stops carrying large datagrams brings the size back
// (Config.DisablePathMTUDiscovery, ConnectionStats.MaxDatagramSize).
//
// Careful Resume (RFC 9959) is on unless Config.DisableCarefulResume: a
// server hands a satquic client the path state it measured in BDP frames,
// sealed under Config.ResumeKey so that the client can neither read nor
// alter it; the client keeps it with its session ticket and returns it on
// its next connection, which starts from that state instead of the
// initial window (ConnectionStats.CarefulResume).
//
// DATAGRAM frames (RFC 9221) carry unreliable datagrams when both ends set
// Config.EnableDatagrams (ConnectionState().SupportsDatagrams):
// SendDatagram queues one for the next packets without blocking, dropping
// the oldest queued when its queue is full (SendDatagrams queues a batch
// under one lock and one wake-up, so that its packets go out together);
// ReceiveDatagram waits for the next; MaxDatagramPayloadSize tells what fits now. They are congestion
// controlled and paced, never sent again when lost, protected by FEC like
// stream data (ConnectionStats.Datagrams).
//
// ACK frequency (draft-ietf-quic-ack-frequency) is on unless
// Config.DisableAckFrequency: with a peer that offers it too, a sender
// on a long path asks for one ACK per 1/128 of its congestion window once
// slow start ended, so that a thin satellite return link carries a
// fraction of the ACKs; the peer's requests are followed
// (ConnectionStats.AckFrequency).
//
// Connection migration (RFC 9000 section 9): a server follows a client
// whose address changed, after a NAT rebinding or a migration, once its
// newest packet comes from there; it validates the new address with
// PATH_CHALLENGE, sends it no more than three times what it received from
// it until then, and goes back to the old one if the new one does not
// answer; a client that waits for stream data and hears nothing for a
// probe timeout sends a PING, so that after a NAT rebinding the server
// learns its new address at once. A client moves a connection to another
// socket with Conn.Migrate, which probes the new path first; a server
// refuses with Config.DisableActiveMigration (ConnectionStats.Migration).
//
// A server whose Transport has a PreferredConn offers its address in
// preferred_address (RFC 9000 section 9.6); a client moves there once it
// answers a probe, and the server then answers from it.
package quic
