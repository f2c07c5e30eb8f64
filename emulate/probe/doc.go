//go:build linux

// Package probe measures a link through the emulator from the outside: it
// sends paced, numbered, timestamped UDP datagrams through a relay-mode
// emulator to a sink in the same process, and reports the delivered rate,
// the one-way delay distribution, the loss rate and the loss-run lengths,
// side by side with what the link model predicts for them.
//
// Sender and receiver share one clock, so one-way delays are exact. Both
// run on high-priority threads when the process may have them, so that the
// probe measures the emulator rather than its own scheduling; a sender that
// still falls behind says by how much, and skips the time it lost rather
// than bursting.
package probe
