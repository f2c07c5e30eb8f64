// Package loadcmp is the HTTP/3 load experiment of seed 001, run side by
// side: the same load generator (package bench/load) against satquic's
// HTTP/3 server and against quic-go's, serving the same payloads with the
// same handler (bench/load/payload), on loopback, in one run. It reports
// requests per second for each payload over shared connections and new
// connections per second, with the ratio between the stacks.
//
// Each server runs as a child process with the machine's GOMAXPROCS, and
// the generator in the calling process: both stacks get the same setup,
// and neither server shares a Go runtime (scheduler, garbage collector)
// with the generator. quic-go's server is the load-server subcommand of
// internal/cmd/quicgo-peer, a program of its own so that quic-go never
// becomes a dependency of satquic; satquic's is "satquic bench
// load-server". A fresh server process serves each measurement.
package loadcmp
