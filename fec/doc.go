// Package fec is satquic's forward erasure correction engine: the
// sliding-window Random Linear Code of RFC 8681 over GF(2^8) and the
// redundancy controllers that decide how many repair symbols to send. The
// QUIC transport and the FEC tunnel both use it. The codes it is measured
// against (XOR parity, block Reed-Solomon, Maelstrom) live in package
// fec/baseline, behind the same SchemeEncoder and SchemeDecoder
// interfaces, and fec/fecsim runs them all side by side.
//
// Files, by concern:
//
//   - gf.go, kernel*.go: GF(2^8) arithmetic and the SIMD region
//     multiply-add kernels (our own AVX-512BW and AVX2 ones,
//     klauspost/reedsolomon's, and a portable fallback, all tested against
//     each other; KernelName says which one runs).
//   - tinymt32.go, coefficients.go: the TinyMT32 PRNG (RFC 8682) and the
//     coding coefficients of RFC 8681 section 3.6, bit-exact.
//   - repairid.go: the Repair FEC Payload ID (RFC 8681 section 4.1.3).
//   - encoder.go, decoder*.go: the sliding-window RLC codec for
//     variable-length symbols; the decoder solves by progressive Gaussian
//     elimination (decoder_solve.go) over the window it keeps
//     (decoder_window.go).
//   - scheme.go: the SchemeEncoder/SchemeDecoder interfaces shared by
//     every scheme (this package's RLC and the baselines), and the loss
//     Feedback the receiver reports.
//   - controller*.go: redundancy controllers (fixed rate, HIRT, adaptive),
//     which decide when a repair goes out and over how many sources;
//     rlcscheme.go joins one to the Encoder as a SchemeEncoder.
//   - monitor.go: the receiver's LossMonitor, which turns arriving and
//     recovered ESIs into the Feedback reports the controllers read.
//
// Nothing in this package reads the clock, sleeps or starts goroutines:
// callers feed it packets (and, where it matters, the time).
package fec
