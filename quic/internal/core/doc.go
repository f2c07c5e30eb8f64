// Package core is satquic's sans-IO QUIC connection (RFC 9000, RFC 9001,
// RFC 9002): a state machine that is fed datagrams and the time, and
// produces datagrams to send and the time it next needs attention. It
// never reads a clock, sleeps, starts goroutines or touches a socket, so a
// connection runs the same in real time under a driver and in virtual time
// under the netsim simulator, and replays exactly from a seed
// (internal/archtest enforces it). Randomness (connection IDs, reset
// tokens) comes from Config.Rand.
//
// # Calling protocol
//
// Time is a time.Duration since an epoch the caller picks. A driver:
//
//   - creates a client with NewClientConn, or a server with NewServerConn
//     when PeekInitial accepts a datagram (then feeds it that datagram);
//   - calls HandleDatagram for every datagram from the peer, or
//     HandleDatagramECN with the ECN codepoint it arrived with when the
//     socket reports it;
//   - calls HandleTimer when the time NextTimer gave has come;
//   - after either, and after the application wrote, calls NextDatagram
//     until it reports false, sending each datagram to RemoteAddr with
//     the codepoint DatagramECN gives (a driver that cannot set or read
//     codepoints sets Config.DisableECN), then waits until NextTimer (a
//     time at or before now means at once);
//   - drains PollEvent: handshake progress, streams opened by the peer,
//     readable and writable streams, connection IDs to route, and
//     EventClosed, the last event;
//   - forgets the connection when Closed reports true; the core has then
//     released its TLS handshake (Release, which a driver calls itself
//     only for a connection it abandons earlier, and which is idempotent).
//
// A server's listener handles a datagram for no known connection without
// state: VersionNegotiation answers an unsupported version (RFC 9000
// section 6); PeekInitial parses a first Initial; an AddressValidator's
// Check opens its token (a Retry's or a NEW_TOKEN frame's) and gives the
// ServerParams, or the listener answers with the validator's Retry packet
// (section 8.1.2), or with RefuseInitial after ErrInvalidToken. A server
// connection answers to InitialDestConnID until the handshake is
// confirmed.
//
// A client resuming a session with Config.Allow0RTT may open streams and
// write before the handshake completes: that data goes in 0-RTT packets
// (EventEarlyDataRejected if the server refuses it, when it is sent again).
// A server with Allow0RTT may then report streams opened by the peer
// before EventHandshakeComplete, and answer on them at once: once it
// accepted 0-RTT, its stream data goes out in 1-RTT packets with its
// handshake flight (0.5-RTT data), within the anti-amplification budget
// its handshake does not need.
//
// Streams are addressed by their RFC 9000 IDs: OpenStream, StreamWrite
// (buffers within a send-buffer limit of twice the congestion window and
// returns a short count when full), StreamRead (0 and no error when
// nothing is readable, io.EOF at the end, *StreamError after a reset),
// CloseWrite (FIN), ResetStream and StopSending. Close sends an application
// CONNECTION_CLOSE. Stats reports RTTs, window and counters.
//
// # Inside
//
// The connection is split by concern into small components:
//
//   - handshake.go drives crypto/tls's QUICConn: secrets become packet
//     protection keys (package crypto), CRYPTO data flows per encryption
//     level, the peer's transport parameters are parsed and their
//     connection IDs authenticated (RFC 9000 section 7.3); Initial and
//     Handshake keys are discarded as RFC 9001 section 4.9 says, and the
//     server confirms with HANDSHAKE_DONE.
//   - receive.go splits coalesced packets, removes header and packet
//     protection, checks connection IDs and reserved bits, and hands the
//     frames to frames.go.
//   - packetizer.go decides what a datagram carries: its size (the
//     server held to three times what it received until the client's
//     address is validated, RFC 9000 section 8.1), what congestion
//     control, the pacer and probes allow, the spaces with something to
//     send, and each packet's frames (packetizer_app.go: control frames
//     and stream data, round robin). packet_writer.go writes it: a
//     packetWriter owns the datagram buffer, starts each packet with its
//     header, appends frames within the room left and records them for
//     loss recovery, coalesces Initial, Handshake and 1-RTT packets, pads
//     the last one when an Initial packet needs a 1200-byte datagram,
//     and protects them in place. seal.go then records the packets sent.
//   - ack.go decides when ACK frames go out: at once in the handshake
//     spaces and for out-of-order packets, after AckElicitingThreshold
//     ack-eliciting packets or max_ack_delay otherwise (RFC 9000 section
//     13.2), with bounded ranges.
//   - Loss recovery and congestion control are package recovery's Sender.
//     Every sent packet has a record of its frames (sentlog.go); when the
//     Sender reports it acknowledged or lost, frames.go completes the frames
//     or queues their content again (RFC 9000 section 13.3), and probe
//     timeouts resend handshake data or the oldest data in flight.
//   - streams*.go implement stream states, IDs and limits (MAX_STREAMS is
//     raised as the peer's streams finish), reassembly (recvbuf.go), send
//     buffers with retransmission ranges (sendbuf.go), final sizes, RESET_STREAM
//     and STOP_SENDING. Stream data lives in blocks shared by all
//     connections through pools (pool.go): a received frame is copied once,
//     to its offset, and a sent one is framed straight from its block, so a
//     transfer in steady state allocates nothing (allocs_test.go); sent-packet
//     records and queues are rings that reuse their memory (ring.go,
//     sentlog.go). flow.go does connection and stream flow control with
//     receive windows that tune themselves to round trips of consumption,
//     up to 64 MiB per stream and 96 MiB per connection by default.
//   - close.go: CONNECTION_CLOSE, closing and draining periods, silent
//     closes; idle.go the idle timeout; cid.go connection IDs
//     (NEW_CONNECTION_ID, RETIRE_CONNECTION_ID, active_connection_id_limit)
//     and stateless reset detection; keyupdate.go 1-RTT key updates.
//   - undecryptable.go holds packets that arrive before their keys (RFC
//     9001 section 5.7); handshake_discard.go has the server acknowledge
//     the client's Finished before it drops its Handshake keys.
//   - version.go: Version Negotiation packets, the client's restart or
//     *VersionError, version_information and compatible v1/v2
//     negotiation (RFC 9368, RFC 9369); retry.go and refuse.go: Retry,
//     tokens and AddressValidator; tokens.go: NEW_TOKEN and TokenStore.
//   - resume.go and early.go: session tickets carry the server's
//     transport parameters and the smoothed RTT (Config.ResumeRTT); 0-RTT
//     within the remembered limits (RFC 9000 section 7.4.1), acceptance,
//     rejection, key discard; off unless Config.Allow0RTT (replays, RFC
//     9001 section 9.2). halfrtt.go lets a server that accepted 0-RTT
//     send its responses before its handshake completes (RFC 9001
//     section 4.1.1), keeping the budget a repeat of its flight needs.
//   - ecn.go: ECN (RFC 9000 section 13.4). Received codepoints are counted
//     per space and reported in ACK_ECN frames, a CE mark is acknowledged
//     at once. The first ten 1-RTT datagrams (or three PTOs of them) go
//     out ECT(0), then none until the peer's counts validate them: counts
//     that decrease, exceed what was sent or miss newly acknowledged
//     marked packets (a path that clears the field), or the loss of every
//     marked packet (a path that drops them), turn marking off for good.
//     Once validated every 1-RTT datagram is marked, and recovery treats
//     a CE increase as congestion (ECNValidator, RFC 9002 appendix B.7).
//     Handshake datagrams are never marked.
//   - pmtud*.go: path MTU discovery (RFC 9000 section 14.3, RFC 8899
//     section 5). Once the handshake is confirmed, PING+PADDING probes
//     search upwards from Config.MaxDatagramSize to MaxProbeDatagramSize
//     (and the peer's max_udp_payload_size); an acknowledged probe raises
//     the size, a lost one is no congestion signal (recovery's
//     MarkPathProbe), and large packets lost while small ones get through
//     send the size back to the start (a black hole).
//   - qlog.go writes the JSON-SEQ qlog of Config.Qlog.
//   - fec_*.go: forward erasure correction inside the connection
//     (Config.FEC), offered by a transport parameter: 1-RTT packets with
//     stream data are source symbols of the RFC 8681 code (a
//     FEC_SOURCE_ID frame first), repairs go in FEC_REPAIR packets of
//     their own, paced and congestion controlled, at a rate the adaptive
//     controller takes from the sender's ACKs, plus repairs over the tail
//     when the application stops sending. The receiver processes rebuilt
//     packets at once and reports them (FEC_RECOVERED); loss detection
//     holds a covered packet until its repair could have been reported,
//     and never retransmits a rebuilt one (recovery's CoverPacket and
//     OnRecovered).
//
// A protocol violation inside an authenticated packet closes the connection
// with the RFC's error code; malformed or unauthenticated input is dropped
// and never panics (see the fuzz targets).
//
// # Not yet
//
// Connection migration and path validation (PATH_CHALLENGE is answered,
// the path never changes), and DATAGRAM frames; ECN uses ECT(0) only (no
// L4S ECT(1) response). Handshake packets are not FEC-protected (their
// spaces have their own keys and probes).
package core
