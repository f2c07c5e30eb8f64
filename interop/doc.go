//go:build linux

// Package interop runs the test cases of the QUIC interop runner
// (github.com/quic-interop/quic-interop-runner) between satquic and other
// QUIC stacks, each as client and as server, through the emulator, and
// gathers the results in a matrix: the "satquic interop" command.
//
// It runs on Linux only, as the emulator it drives does.
//
// The runner starts each stack in a container, links them through an ns-3
// network simulator, and judges a test case from the downloaded files and
// a packet capture decrypted with the endpoints' key logs. This package
// reproduces that with what satquic has: the emulator's UDP relay (or its
// network namespaces, for the one case that needs IP headers) with each
// case's link, a NAT that rebinds the client's port or address for the
// rebind cases (rebind.go), a recording proxy in front of the server
// (tap), and
// package capture to read the recorded datagrams as QUIC. The cases
// (cases.go) state what the runner's testcases_quic.py asks: the files,
// what each endpoint is told to do, the link, and the checks (checks.go),
// restated on the capture.
//
// An Implementation is a stack as the runner sees an image: satquic in this
// process, quic-go through the interop roles of internal/cmd/quicgo-peer,
// ngtcp2 through the example programs Debian packages. Each says which
// tests it cannot run and why, and the matrix shows those cells as
// unsupported. Run runs the cells one after another; Matrix prints them,
// writes them as JSON, and decides the verdict: every case quic-go passes
// against itself must pass with satquic on either side of every pair,
// but for failures found to lie outside satquic (known.go).
package interop
