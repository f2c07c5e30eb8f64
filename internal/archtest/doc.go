// Package archtest holds no code: its tests enforce the architecture rules
// of docs/architecture.md. The packages that must stay pure state machines
// (principle 1: no clock, no sleeping, no goroutines, no global math/rand)
// are checked so that they run in virtual time and replay from a seed; and
// every package has a layer and imports only packages below it (the core
// never the quic package, the codecs never the core, nothing but programs
// the experiments).
package archtest
