// Package loss provides seeded, deterministic per-packet loss models for the
// satquic link model, the FEC simulator and the emulator.
//
// A Model answers one question per packet, Drop, and advances its state. The
// same spec and seed always give the same sequence of decisions, so a run is
// reproducible from its seed. Models are not safe for concurrent use: each
// link direction owns its own model.
//
// Models are built with constructors (NewUniform, NewGilbertElliott,
// NewBurst, NewDropList, NewTrace) or parsed from a spec string with Parse:
//
//	none                 no loss
//	uniform:P            independent loss with probability P (Bernoulli)
//	ge:P,R[,LB,LG]       Gilbert-Elliott: P good->bad, R bad->good, LB loss
//	                     probability in the bad state (netem's 1-h, default 1),
//	                     LG loss probability in the good state (netem's 1-k,
//	                     default 0)
//	burst:P,MAX          Bernoulli loss with probability P, but never more than
//	                     MAX packets lost in a row
//	drop:1,5,7-9         drop exactly these 0-based packet indices
//	trace:FILE           a file of 0/1 characters (1 = drop), whitespace
//	                     ignored, replayed in a loop
//	pattern:0010011      the same, written inline
//
// Probabilities are written as fractions in [0,1] ("0.01") or as percentages
// ("1%"). A model's String returns its canonical spec: parsing it again gives
// a model with the same behaviour for the same seed.
//
// Gilbert-Elliott follows netem's "loss gemodel" semantics (see the netem
// man page and Hasslinger & Hohlfeld, "The Gilbert-Elliott Model for Packet
// Loss in Real Time Services on the Internet", 2008): the chain starts in the
// good state, each packet is lost with the loss probability of the state the
// chain is in before the transition, then the chain moves. Its mean loss is
// (R*LG + P*LB)/(P+R); with LB=1 and LG=0 loss runs are geometric with mean
// 1/R.
//
// The burst model reproduces the drop-rate scenario of the QUIC interop
// runner's network simulator (quic-interop/quic-network-simulator,
// drop-rate-error-model.cc), which the handshakeloss and transferloss test
// cases use: each packet is dropped with probability P unless the packets
// just before it were dropped in a run that reached the cap, in which case it
// is forwarded and the run restarts. That simulator compares the run length
// with "> burst", which lets MAX+1 packets fall in a row; this package caps
// runs at exactly MAX, as its spec promises.
package loss
