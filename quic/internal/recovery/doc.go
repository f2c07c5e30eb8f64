// Package recovery is satquic's loss recovery and congestion control: the
// RTT estimator, sent-packet tracking per packet number space, loss
// detection and the probe timeout of RFC 9002, the NewReno (RFC 9002
// section 7) and CUBIC (RFC 9438) controllers with HyStart++ (RFC 9406),
// BBRv3 (draft-ietf-ccwg-bbr), delivery-rate sampling
// (draft-cheng-iccrg-delivery-rate-estimation) and a pacer.
//
// # Time and purity
//
// The package is a state machine. Time is a time.Duration since an epoch
// the caller picks (the connection's start, or a simulator's zero) and is
// passed to every method that needs it; nothing reads a clock, sleeps,
// starts a goroutine or draws a random number, so a run replays exactly in
// virtual time. internal/archtest enforces this.
//
// # How the connection core drives a Sender
//
//   - OnPacketSent for every packet sent, ACK-only ones included. The core
//     passes an opaque Ref (an index into its own table of what the packet
//     carried); the Sender hands it back, so tracking allocates nothing per
//     packet.
//   - OnAck for every ACK frame. The returned Result lists the packets newly
//     acknowledged, lost (retransmit their frames; each with the rule that
//     declared it lost, LossTrigger, for qlog), acknowledged after
//     being declared lost (spurious), and whether persistent congestion was
//     established.
//   - Deadline tells when to call OnTimeout. A timeout either declares
//     time-threshold losses or asks for probes (Result.Probe).
//   - CanSend, SendWindow and NextSendTime say whether and when the next
//     in-flight packet may leave: congestion window, then pacer. Probes
//     bypass both.
//   - SetHandshakeKeys, ConfirmHandshake, SetAmplificationLimited,
//     SetPeerMaxAckDelay, DiscardSpace and DiscardPackets feed the
//     handshake state that RFC 9002's per-space rules depend on.
//   - SetAppLimited when the core had nothing to send: the window does not
//     grow on an application-limited flight (RFC 9002 section 7.8) and rate
//     samples are marked.
//
// Every time-derived constant (initial RTT, max_ack_delay, granularity,
// thresholds, PTO bounds, windows, HyStart++ thresholds, the FEC hold) is a
// Config field. A zero field takes the RFC value (Config.WithDefaults;
// DefaultConfig is the zero Config filled in); satellite paths change
// InitialRTT (a resumed connection may reuse its smoothed RTT) and keep the
// large default MaxWindow (160 MiB: twice 1 Gbit/s x 650 ms, 81.25 MB).
//
// # Data structures
//
// Each space keeps its records in a ring indexed by packet number, and a
// short sorted list of "holes": the outstanding or watched-lost packets at
// or below the largest acknowledged. An ACK costs the packets it newly
// covers plus the holes, not the connection's history; loss detection
// scans only the holes. Records of lost packets are watched for one PTO
// period so that a late acknowledgement is counted as a spurious loss.
//
// # FEC-aware loss detection
//
// With forward erasure correction, a lost packet may be rebuilt by the peer
// from a repair symbol sent after it. CoverPacket tells the loss detector
// that packet N is covered by a repair expected by time T: N is not
// declared lost before T (bounded by Config.FECMaxHold, or the smoothed
// RTT if longer, past the time threshold), so the sender does not
// retransmit what the repair will rebuild. OnRecovered takes the peer's
// report of the packets it rebuilt: they are delivered and never
// retransmitted; for congestion control they count as a loss under
// FECSignal, as delivered under FECHide, and under FECAuto as a loss only
// where the path shows congestion around them: RTT samples above the
// minimum by half the minimum RTT (at least 5 ms), an ECN-CE mark, or
// losses FEC did not rebuild at a tenth of the packets sent
// (fec_auto.go). Sender.RecoveredIsCongestion gives that answer, for the
// rate sampler and any controller's loss model. Their bytes count as
// delivered in the delivery-rate samples under every policy, and as lost
// too where the policy counts them as congestion; BBR, whose model is built
// from those samples, is then also told of them by OnAck, after the
// congestion event. Under FECHide a source
// declared lost before its rebuild was reported signals congestion only
// if the report has not come a PTO period later (fec_defer.go); its
// frames are sent again at once all the same. FECAuto waits so too
// unless the path shows congestion at the loss, when it signals at once.
//
// # Congestion control
//
// A Controller owns the window and the pacing rate; the Sender owns bytes
// in flight and tells the controller about sent packets (OnPacketSent),
// acknowledgements with a delivery-rate sample (OnAck), and congestion
// signals (OnCongestionEvent: loss, ECN-CE, rebuilt packets the FEC
// policy counts as congestion, with the persistent flag). NewReno and CUBIC share windowBase: slow start with
// HyStart++, one reduction per recovery period, minimum and maximum window.
//
// On a path whose minimum RTT is 80 ms or more, the first slow start is
// the long-RTT slow start (LongRTTConfig, longrtt.go): the initial window
// and the growth scaled by minRTT/50 ms, the window paced as a train at
// the rate of the next round trip, an exit on the first sustained RTT
// increase, and a window set from the bottleneck rate the train measured.
// Before that, the first burst's ACKs measure the bottleneck's rate
// (firstflight.go), and the window jumps to its bandwidth-delay product a
// round trip after the data began. A GEO path fills in two round trips
// instead of ten, without overflowing a buffer of one bandwidth-delay
// product.
//
// BBR (Algorithm BBR, bbr*.go) is BBRv3 as draft-ietf-ccwg-bbr specifies
// it, tuned by BBRConfig (zero fields are the draft's constants): a model
// of the bottleneck bandwidth (the maximum delivery rate over two ProbeBW
// cycles, bbr_model.go) and of the minimum RTT (10 s) sets the pacing rate
// (gain x bandwidth, 1% below) and the window (gain x BDP plus the ACK
// aggregation and send quanta, bbr_pacing.go). Startup and Drain
// (bbr_startup.go), ProbeBW's DOWN, CRUISE, REFILL and UP (bbr_probebw.go)
// and ProbeRTT every 5 s (bbr_probertt.go) move the gains; a loss rate
// above 2% or more than half the packets of a round trip marked CE bound
// the data in flight from above (inflight_hi), any loss or mark outside a
// probe from below (bw_lo, inflight_lo, bbr_bounds.go). AckEvent.Rate
// carries the samples (delivered, interval, rate, application-limited
// flag, bytes in flight and lost at send time). Where satquic departs from
// the draft, the code says why: the long-path Startup (bbr_longrtt.go, as
// LongRTTConfig for CUBIC, whose first flight also counts as a round of
// the full-pipe estimator), no ProbeRTT during Startup nor while RTT
// samples come within ProbeRTTSlack of the minimum, and a recovery
// period (packet conservation) and a cut of the lower bounds only on a
// loss rate above the threshold (or a CE mark for the bounds), so that
// random loss on a satellite link is not taken for congestion.
// ControllerState.BBR shows the state and the model.
//
// An application's controller (congestion.Controller, Config.Custom) is
// wrapped by customController (custom.go), a Controller: it converts the
// events into the public types in reused buffers, bounds the window to
// [minimum window, MaxWindow] and the pacing rate from below (zero is the
// window's rate), and recovers a panic, after which the controller is not
// called again and Sender.ControllerError reports it so that the core
// closes the connection.
//
// # Careful Resume
//
// Careful Resume (RFC 9959, resume*.go) lets a connection start from a
// path state an earlier one saved (ResumeState: bytes per round trip and
// the minimum RTT; SavablePathState measures it). StartCarefulResume wraps
// the controller in carefulResume, a Controller, so the Sender sees no
// difference. In Reconnaissance it forwards everything; once the initial
// data (what was sent before the first RTT sample, which the
// anti-amplification limit may keep below an initial window) is
// acknowledged with an RTT that confirms the path (above half the saved
// RTT, at most ten times it), it enters Normal if the normal window
// already reaches the jump (ResumeWindowSufficed), and otherwise, once
// that window is full, it jumps to jump_cwnd = min(MaxJump, saved_cwnd/2), paced at jump_cwnd per RTT
// (Unvalidated); the window then becomes the flight size and grows by slow
// start until the last unvalidated packet is acknowledged (Validating),
// after which congestion avoidance goes on from there (Normal). Congestion
// while unvalidated, or RTT samples showing that the jump built a queue,
// cut the window to PipeSize/2 until the unvalidated packets are drained
// (Safe Retreat). NewReno and CUBIC let the wrapper set their window
// (windowResumer); a controller with a model of its own, as BBR, instead
// implements resumeDriven: it is told to probe at half the saved
// bandwidth, to retreat and when resuming ends, decides itself which
// congestion signals while resuming are congestion (for BBR a CE mark, or
// losses above its 2% threshold of the data sent since the jump, so that
// random loss does not undo the jump), and discards the samples taken
// meanwhile (bbr_resume.go: a validated probe rate then enters its
// bandwidth filter and Startup expects the saved bandwidth; Safe Retreat
// holds PipeSize/2 paced over the minimum RTT, whose rate then enters the
// filter). ResumePhase and the Resume counters of Stats report the phases.
package recovery
