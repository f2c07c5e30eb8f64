// Package fecsim is satquic's packet-level FEC simulator: the experiment of
// HIRT's section VIII (seed 002), made reproducible and extended with
// satquic's adaptive controller.
//
// One run sends a stream of random, variable-length source packets through
// a scheme's encoder; sources and repairs, interleaved as the encoder emits
// them, cross one lossy channel (a single netsim/loss model instance over
// the whole packet sequence, so a burst hits repairs as well as sources);
// the survivors reach the scheme's decoder. When the scheme wants feedback,
// a fec.LossMonitor at the receiver writes reports that reach the encoder
// RTTPackets packets later. Time is counted in packets sent.
//
// A run measures, over its first Packets sources: the overhead (repairs
// per source, counted over the whole stream), the recovered ratio
// (recovered / lost sources, 1 when nothing was lost), the residual loss
// (lost and never recovered / sources), the recovery delay (packets sent
// between a lost source and its recovery, p50 and p99), and the decoder's
// CPU time per packet it was handed. Every recovered packet is compared
// byte for byte with the original; any difference, or a recovery of a
// source that was never lost, counts as a mismatch. The stream continues
// for a drain of unmeasured sources after the measured ones, so that the
// last measured sources are protected like any other: the figures are
// steady-state figures, as in the paper.
//
// Runs are deterministic for a seed (the decode time aside: it is the one
// place the simulator reads the clock). Sweep runs many in parallel, over
// GOMAXPROCS workers, with results in a fixed order whatever the
// scheduling. The sweeps of the paper are here: uniform loss 0..5%
// (figure 10), a 100-point Gilbert-Elliott design (figure 11a) and the
// Starlink fit (figure 11b).
package fecsim
