// Package baseline holds the FEC codes that satquic's sliding-window RLC
// (package fec) is measured against: XOR parity, block Reed-Solomon (the
// code of kcptun and UDPspeeder) and Maelstrom's layered interleaved XOR
// (the baseline of HIRT). They are research baselines for the simulator
// (fec/fecsim, `satquic sim`), not part of the QUIC transport: each is a
// fixed-rate block or layered code behind fec's SchemeEncoder and
// SchemeDecoder interfaces, so the simulator runs them exactly as it runs
// the RLC schemes.
//
// Files, by concern:
//
//   - xor.go: XOR parity over blocks of k sources, the one-layer case of
//     Maelstrom's code.
//   - maelstrom.go, maelstrom_decoder.go: Maelstrom's configuration and
//     layered XOR encoder, and the peeling decoder of every XOR code.
//   - xorrepair.go: the repair packet format of the XOR codes.
//   - rs.go, rs_decoder.go: block Reed-Solomon over klauspost/reedsolomon,
//     its repair format and its block decoder.
//   - symbol.go: the length-prefixed coded symbol that lets a block code
//     protect packets of different lengths, and the errors of the repair
//     parsers and decoders.
//   - window.go: the decoders' bounded memory of recent sources.
//
// Like package fec, nothing here reads the clock, sleeps or starts
// goroutines.
package baseline
