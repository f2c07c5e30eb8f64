// Package load is an HTTP/3 load generator: it sends GET requests to one
// URL from many workers at once and measures requests per second, new
// connections per second, transfer rate and latency percentiles, and
// counts failures by kind.
//
// Workers share a few long-lived connections (HTTP/3 multiplexes their
// requests as streams), or each request opens a connection of its own
// (Options.NewConn), which measures how many handshakes a server
// completes per second. The client is satquic's http3.Transport; the
// server can be any HTTP/3 server.
//
// The generator tries to cost its host little, so that on a shared
// machine the server under test gets the CPU: bodies are read into one
// buffer per worker and never kept, latencies go into one HdrHistogram
// of the phase, 256 at a time from each worker's batch (one histogram per
// worker missed the processor's cache on every request), and all
// connections share one UDP socket, read in batches.
package load
