// Package archtest holds no code: its test enforces the architecture rules
// of docs/architecture.md (principle 1) on the packages that must stay pure
// state machines (no clock, no sleeping, no goroutines, no global
// math/rand), so that they can run in virtual time and replay from a seed.
package archtest
