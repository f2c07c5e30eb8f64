// Package bench runs satquic's experiments, the reproductions of the seed
// results (docs/architecture.md, "Experiments"), and turns their
// measurements into tables, CSV, JSON and figures (through package
// internal/report).
//
// The download experiment (seed 000) measures download completion time:
// from the start of a fresh connection, handshakes included, to the last
// byte of a response of a given size, over an emulated network profile in
// real time (package emulate, namespace mode). Every run gets fresh
// namespaces, so no state (TCP metrics cache, queues, loss draws) leaks
// from one run to the next, and its link seed is derived from the
// experiment's seed and the run number, so that every stack of a run meets
// the same loss draws.
//
// A transport under test is a Stack: it starts a server in the server's
// namespace and downloads from it in the client's (Env). The kernel TCP
// stacks (tcp-cubic, tcp-bbr) are HTTPS over kernel TCP; the satquic stacks
// are satquic's QUIC with the library's default congestion controller (or
// the one --cc chose: CongestionControlled), with FEC under the library's
// default policy, auto (satquic), the hide policy (satquic-hide) or the
// signal policy (satquic-signal), or without FEC (satquic-nofec), asked
// for N bytes with an hq-interop style request, so that only the transport
// is measured. The quic-go stack is quic-go's HTTP/3 server and client with
// their default configuration, run as a separate program so that quic-go
// stays out of satquic's own dependencies. A stack plugs in with one file that implements Stack and
// registers itself from init.
//
// With --virtual, a VirtualStack runs the same download in virtual time
// over the profile's modelled links (package quic/quicsim, on the sans-IO
// core and netsim): deterministic for a seed, and a 20 MB download over a
// lossy path takes a tenth of a second of CPU.
//
// The resume experiment (seed 003) runs the same loop over stacks whose
// client comes back: satquic-0rtt and quic-go-0rtt time a second
// connection that resumes a first one's session and asks in 0-RTT, and
// satquic-resume one that also resumes with Careful Resume from the path
// state its first connection let the server measure, against
// satquic-cold and quic-go-cold (resume.go).
//
// The bulk experiment (bulk.go) measures the goodput of one connection on
// loopback for satquic, quic-go and kernel TCP with TLS, every end a child
// process ("satquic bench bulk-peer", quicgo-peer's bulk-server and
// bulk-client), and the memory a QUIC server holds per idle connection.
//
// Files: stack.go (Stack, Env, the registry), download.go (the experiment
// loop), resume.go (the resume experiment's stacks), stats.go (percentiles and summaries), limit.go (the physical
// limit), sizes.go (size parsing), httpsbytes.go (the HTTPS byte server and
// its certificate), tcpstack_linux.go (the kernel TCP stacks),
// satquicstack.go (satquic's QUIC), quicgostack.go and
// quicgostack_process.go (quic-go's HTTP/3, as the external program
// internal/cmd/quicgo-peer that the stack builds), virtual.go (--virtual), netns.go
// (Env over emulator namespaces), metadata.go (what makes a result
// reproducible), output.go (table, CSV, JSON) and plot.go (the figure); bulk.go (the bulk
// experiment's loop), bulk_idle.go (its idle measurement), bulk_proto.go
// (this package's names for bench/bulkproto, the wire and child protocols
// and memory reports it shares with internal/cmd/quicgo-peer), bulk_server.go and
// bulk_client.go (the satquic and tcp-tls children), bulk_child.go (the
// children's processes) and bulk_output.go (its tables and JSON).
package bench
