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
// Time is a time.Duration since an epoch the caller picks, passed as now to
// every entry point whose behaviour depends on it: the connection keeps no
// clock of its own. A datagram is a Datagram, in and out: the peer's
// address, the payload and the ECN codepoint of its IP header (package
// internal/ecn's type, the one netsim and the UDP sockets use). Every
// driver runs the same turn: the real-time loop of package quic over a
// socket, package coresim over the netsim simulator (quicsim's experiments
// and this package's simulation tests), and the tests' scripted pair and
// allocation lockstep. A driver:
//
//   - creates a client with NewClientConn, or a server with NewServerConn
//     when PeekInitial accepts a datagram (then feeds it that datagram);
//   - calls Step with the datagrams that arrived since its last turn, each
//     with the codepoint it arrived with (ecn.NotECT when the socket cannot
//     tell): Step hands them to HandleDatagram in order, then runs the
//     timers due at now (HandleTimer);
//   - drains PollEvent: handshake progress, streams opened by the peer,
//     readable and writable streams, connection IDs to route, and
//     EventClosed, the last event; the application acts on them, and on
//     the connection at any time between turns (OpenStream, StreamRead,
//     StopSending and Close take now too);
//   - calls NextDatagram until it reports false, sending each datagram to
//     its Addr with its codepoint (a driver that cannot set or read
//     codepoints sets Config.DisableECN); it may send them in batches and
//     leave the connection to the application while a batch is written;
//   - while a client probes a path from a new local address (ProbePath),
//     sends NextProbeDatagram's datagrams from that address, and every
//     datagram after EventPathMigrated; updates the peer's address on
//     EventPeerAddressChanged (a datagram's Addr already says where it
//     goes); a server with a preferred address sends from it after
//     EventPreferredAddressUsed;
//   - waits until NextTimer (a time at or before now means at once), or
//     until datagrams arrive or the application acted; before a long wait
//     it may call ReleaseIdle, which frees what the connection can build
//     again (its ciphers, scratch and empty logs) and changes nothing it
//     does;
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
// nothing is readable, io.EOF at the end, *StreamError after a reset;
// CreditPending then says whether the read queued a window update, which
// a driver wakes its sending side for), CloseWrite (FIN), ResetStream and
// StopSending. SetStreamMemory lets a driver allocate each stream's memory
// within its own state of the stream. Close sends an application
// CONNECTION_CLOSE. Stats reports RTTs, window and counters.
//
// # Inside
//
// The connection is split by concern into small components:
//
//   - drive.go is the driver's side of the calling protocol (Datagram,
//     Step, NextDatagram); timers.go gathers the deadlines of every
//     component into NextTimer and runs the due ones in HandleTimer.
//   - handshake.go dispatches the events of the TLS handshake (a
//     tlsHandshake, handshake_tls.go, owns crypto/tls's QUICConn, feeds
//     it CRYPTO data and reports its events; a server lets it go once its
//     handshake and session ticket are done, keeping only the TLS state)
//     to the part each concerns,
//     as RFC 9001 section 4.1.3 says: secrets become packet protection
//     keys (package crypto), CRYPTO data flows per encryption level, the
//     peer's transport parameters are parsed, their connection IDs
//     authenticated (RFC 9000 section 7.3) and their limits applied;
//     Initial and Handshake keys are discarded as RFC 9001 section 4.9
//     says, and the server confirms with HANDSHAKE_DONE. client.go makes
//     a client's QUICConn; initial.go has PeekInitial and gives the
//     Initial space its keys (RFC 9001 section 5.2). The
//     handshakeSpeedup (handshake_speedup.go) answers a peer's probe with
//     the CRYPTO data it misses at once (RFC 9002 section 6.2.3). The
//     amplification type (amplification.go) holds a server to three
//     times what it received until the client's address is validated
//     (RFC 9000 section 8.1). release.go ends the TLS handshake's
//     goroutine. config.go gives the transport parameters an endpoint
//     sends.
//   - The receive path has a file per stage, in the order a datagram
//     goes through them, each saying at its top what it does and what
//     comes next: receive.go takes a datagram, counts it and splits its
//     coalesced packets, or finds it a Stateless Reset;
//     receive_packet.go parses a packet's header, checks its connection
//     IDs, and holds a packet that arrives before its keys (RFC 9001
//     section 5.7); receive_open.go removes header and packet
//     protection, decodes the packet number, drops duplicates, follows
//     the key phase and checks the reserved bits; receive_frames.go runs
//     the frame loop, over the packet and over the lost packets FEC
//     rebuilt from it, and dispatches each frame to its handler, with the
//     state it concerns (ACK frames in receive_ack.go, streams*.go,
//     flow.go, cid.go, tokens.go, close.go, handshake.go, fec_conn.go,
//     datagram_recv.go);
//     last, ack.go records the packet for acknowledgement.
//   - packetizer.go decides what a datagram carries: its size (the
//     server held to three times what it received until the client's
//     address is validated, RFC 9000 section 8.1), what congestion
//     control, the pacer and probes allow, the spaces with something to
//     send, and each packet's frames. packetizer_app.go lists the
//     application space's: each state that owns frames to send (flow
//     control, idle, NEW_TOKEN, the stream map, connection IDs) appends
//     them to the writer it is handed and tells whether it has any, and
//     the stream map sends stream data round robin within flow control.
//     packet_writer.go writes it: a packetWriter owns the datagram
//     buffer, starts each packet with its header and the keys that will
//     seal it, appends frames within the room left and records them for
//     loss recovery, coalesces Initial, Handshake and 1-RTT packets, pads
//     the last one when an Initial packet needs a 1200-byte datagram,
//     and protects them in place. seal.go then records the packets sent.
//   - ack.go decides when ACK frames go out: at once in the handshake
//     spaces and for out-of-order packets, after AckElicitingThreshold
//     ack-eliciting packets (more on fast paths, ackrate.go) or
//     max_ack_delay otherwise (RFC 9000 section 13.2), with bounded
//     ranges; a lost ACK frame's information goes out again, and a probe
//     of a handshake space carries an ACK frame (section 13.3).
//   - ackfreq*.go: the ACK frequency extension
//     (draft-ietf-quic-ack-frequency-14, Config.AckFrequency), offered
//     by the min_ack_delay transport parameter. A peer's ACK_FREQUENCY
//     frame replaces ackrate.go's policy in the application space (its
//     threshold, max ack delay, reordering threshold and CE rule, in
//     ack.go), IMMEDIATE_ACK is answered at once, and so are a packet FEC
//     rebuilt and the first ack-eliciting packet after a round trip
//     without an ACK sent. As a sender, once
//     its first slow start ended, the connection asks a peer that
//     offered the extension for one ACK per 1/128 of its congestion
//     window (2 to 256 packets) within an eighth of the smoothed RTT,
//     at most once per RTT, and sends IMMEDIATE_ACK with probes, after
//     an idle period and with its last data; the probe timeout covers
//     the largest max_ack_delay requested until it is acknowledged
//     (ackfreq_send.go has the figures).
//   - Loss recovery and congestion control are package recovery's Sender.
//     Every sent packet has a record of its frames (sentlog.go); when the
//     Sender reports it acknowledged or lost, receive_ack.go hands each
//     frame to the state that sent it, which completes it or queues its
//     content again (RFC 9000 section 13.3), and probe timeouts resend
//     handshake data or the oldest data in flight.
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
//     up to 160 MiB per stream and 256 MiB per connection by default.
//   - close.go: CONNECTION_CLOSE, closing and draining periods, silent
//     closes; one method, end, moves an active connection to closing,
//     draining or closed and reports it. closingState keeps why the
//     connection ended and the datagram that answers the peer while
//     closing. Close starts its period of three PTOs at its now; a close
//     found deep inside a datagram's processing starts it at the first
//     time the connection is given afterwards; and it starts again when
//     CONNECTION_CLOSE first goes out.
//     idle.go: the idle timeout and keep-alive PINGs (idleState). cid.go:
//     connection IDs (connIDs: NEW_CONNECTION_ID, RETIRE_CONNECTION_ID,
//     active_connection_id_limit, IDs drawn from Config.Rand or shaped
//     by Config.NewConnID, with reset tokens from Config.ResetKey,
//     reported through the event queue), stateless reset detection and
//     the peer's reset tokens a driver indexes to find the connection of
//     a Stateless Reset (PeerResetTokens). keyupdate.go: 1-RTT key updates
//     (keyUpdateState, handed the connection's keys). Like the states
//     below, each is a type with its methods, handed the time and what
//     else it needs; the Conn calls them and acts on what they return.
//   - handshake_discard.go has the server acknowledge the client's
//     Finished before it drops its Handshake keys.
//   - version.go: Version Negotiation packets, version_information and
//     compatible v1/v2 negotiation (RFC 9368, RFC 9369). versionState
//     decides: the client's restart or *VersionError, the server's switch
//     to a version it prefers, which packets of another version are read;
//     the Conn changes its keys or starts its handshake again.
//   - retry.go: the retryState of a client takes one Retry (RFC 9000
//     section 17.2.5) and keys its Initials with the Retry's connection
//     ID, and checks the connection IDs the server's transport parameters
//     echo; a server's AddressValidator makes Retry packets and tokens
//     and checks them (section 8.1); refuse.go refuses an Initial.
//     tokens.go: a server's newTokenState sends a NEW_TOKEN frame once its
//     handshake is confirmed, a client keeps the token in the TokenStore
//     for its next connection.
//   - resume.go: session tickets carry the server's transport parameters,
//     the smoothed RTT (Config.ResumeRTT) and the latest BDP blob (below);
//     a client stores its ticket again when a newer blob arrives; the
//     earlyState takes them
//     from a resumed session or, at a server, declines 0-RTT on a ticket
//     whose limits it no longer honors. early.go: the earlyState
//     holds the 0-RTT keys, the remembered limits its data stays within
//     (RFC 9000 section 7.4.1), acceptance and rejection (the 0-RTT
//     packets' content then goes again in 1-RTT ones), the discard of a
//     server's keys three PTOs after the first 1-RTT packet, and which
//     application packets were 1-RTT; off unless Config.Allow0RTT
//     (replays, RFC 9001 section 9.2). halfrtt.go lets a server that
//     accepted 0-RTT send its responses before its handshake completes
//     (RFC 9001 section 4.1.1), keeping the budget a repeat of its flight
//     needs.
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
//     (a black hole), once a probe of the size in use is lost too (a full
//     receive buffer also drops large packets and takes small ones), send
//     the size back to the start, from which the search starts again at
//     the size in use; a search that found a size too large runs again
//     ten minutes later (PMTU_RAISE_TIMER).
//     pmtuState runs the
//     search, times the probes and gives the new sizes, which the Conn
//     hands to loss recovery; the Conn builds the probes.
//   - qlog.go writes the JSON-SEQ qlog of Config.Qlog: the qlogger (nil
//     without a qlog, off once its writer fails) has a method per event,
//     handed the time and what the event reports; recovery_qlog.go holds
//     the recovery events (metrics, congestion state, losses with their
//     trigger), and ecn_qlog.go, pmtud_qlog.go and fec_qlog.go those of
//     ECN, path MTU discovery and FEC.
//   - fec_*.go: forward erasure correction inside the connection
//     (Config.FEC), offered by a transport parameter: 1-RTT packets with
//     stream data or DATAGRAM frames are source symbols of the RFC 8681
//     code (a
//     FEC_SOURCE_ID frame first), repairs go in FEC_REPAIR packets of
//     their own, paced and congestion controlled, at a rate the adaptive
//     controller takes from the sender's ACKs, plus repairs over the tail
//     when the application stops sending (fec_tail.go), repairs over
//     sources declared lost whose content is not sent again (DATAGRAM
//     frames), and over them as a probe timeout's probes
//     (fec_lossrepair*.go), every one paid in bytes from an allowance of
//     MaxOverhead of the source bytes (fec_budget.go), owed repairs
//     waking the connection when the pacer lets them go, shed when the
//     sender falls behind its DATAGRAM queue (fec_overload.go). The receiver
//     (fec_recv.go) hands the packets it rebuilds to the frame loop at
//     once and reports them (FEC_RECOVERED), and holds the DATAGRAM
//     frames that arrive behind a missing source until it is rebuilt, at
//     most a hold, so that they are delivered in the order they were sent
//     (fec_order.go); loss detection holds a covered packet until its
//     repair could have been reported, and never retransmits a rebuilt
//     one (recovery's CoverPacket and OnRecovered). The connection's
//     fecState (fec_conn.go, nil without FEC) offers FEC in the transport
//     parameters, starts the sender when the peer offers it too, handles
//     the FEC frames, and gives the sender what loss recovery reports;
//     fec_qlog.go logs repairs sent and symbols rebuilt.
//   - bdp.go: Careful Resume with the BDP frame (Config.CarefulResume),
//     offered by a transport parameter. A server seals the path state its
//     Sender offers to save (crypto.PathStateSealer, bound to the
//     client's address, the wall-clock time from CarefulResumeConfig.Epoch
//     and a lifetime) and sends it in BDP frames: first as soon as there
//     is one, then after UpdateRTTs round trips when it changed by a
//     quarter, and when the sending stops. A client keeps the latest with
//     its session ticket and returns it, unread, in its first 0-RTT (or
//     1-RTT) packet; the server opens it and resumes from it
//     (Sender.StartCarefulResume), or ignores it and counts why.
//     Careful Resume's phase changes are counted (Stats.CarefulResume)
//     and logged (resume_qlog.go) at either end.
//   - datagram*.go: DATAGRAM frames (RFC 9221, Config.EnableDatagrams),
//     offered in max_datagram_frame_size (the largest UDP payload this
//     endpoint receives) and sent when the peer offered them too, in
//     0-RTT under the remembered value. SendDatagram queues a copy (a
//     full queue drops its oldest), the packetizer puts queued datagrams
//     after the control frames and before stream data, congestion
//     controlled and paced; a lost one is not sent again. Received ones
//     wait in a bounded queue for ReceiveDatagram (EventDatagramReceived),
//     those in packets FEC rebuilt too.
//   - path*.go: the peer's path and connection migration (RFC 9000
//     sections 8.2 and 9). HandleDatagram notes each datagram's address;
//     the newest non-probing 1-RTT packet from another address, once the
//     handshake is confirmed, moves c.remote there (path.go), with a new
//     connection ID of the peer's when the peer changed its own
//     (cid_path.go, section 9.5). The new address is validated with
//     PATH_CHALLENGE and held to three times what came from it until it
//     answers; a validation that times out goes back to the last
//     validated address; a validated new IP address restarts congestion
//     control and the RTT estimate (recovery's ResetPath), a port change
//     alone does not. A server that follows its peer probes the new
//     address at once with the oldest data in flight, and a client that
//     expects stream data and hears nothing for a probe timeout sends a
//     PING of 1200 bytes, so that a NAT rebinding during a download
//     costs one probe timeout and one round trip (path_sim_test.go).
//     PATH_CHALLENGE and PATH_RESPONSE go in datagrams of
//     their own, expanded to 1200 bytes within the limit, the response to
//     the address its challenge came from (path_send.go). migration.go
//     is a client's move to a new local address: ProbePath, the probe
//     datagrams the driver sends from it (NextProbeDatagram), and the
//     switch when the PATH_RESPONSE comes (EventPathMigrated).
//     preferred.go is a server's preferred_address (section 9.6,
//     Config.PreferredIPv4 and PreferredIPv6), which a client probes from
//     its own address once the handshake is confirmed and moves to.
//     path_ahead.go has a server answer a client's probe from a new
//     address with a PATH_CHALLENGE beside its PATH_RESPONSE, so that the
//     address is proven before the client moves there (section 9.3 lets
//     the move skip validation then). path_origin.go keeps a client to the server's addresses (section 9):
//     it drops and counts datagrams from any other than the one in use,
//     the preferred address while it is probed, and for a path
//     validation's time after the move the address it left.
//     EventPeerAddressChanged tells the driver RemoteAddr changed;
//     Stats.Path counts it all and path_qlog.go logs it.
//
// A protocol violation inside an authenticated packet closes the connection
// with the RFC's error code; malformed or unauthenticated input is dropped
// and never panics (see the fuzz targets).
//
// # Not yet
//
// A client does not yet discard datagrams from server
// addresses it does not know (RFC 9000 section 9.6); ECN uses ECT(0) only
// (no
// L4S ECT(1) response). Handshake packets are not FEC-protected (their
// spaces have their own keys and probes).
package core
