//go:build linux

// Package tunnelbench runs `satquic bench tunnel`: HTTP requests of
// unmodified kernel-TCP programs (Go's net/http client in the client's
// network namespace, its server in the server's) through the namespace
// emulator's link, directly or through the CONNECT-IP tunnel of package
// gateway with or without FEC (seed 002's figures 7 and 8), and the
// goodput of bulk TCP flows through the tunnel over a veth pair.
//
// It runs on Linux only (namespaces, TUN devices, the emulator).
//
// The tunnel's two ends run in this process, each with its TUN device in
// its namespace: the gateway's sockets and devices are opened on a thread
// inside the namespace (emulate.Namespaces.Do) and used from any goroutine
// afterwards, so that one binary, with no child process to start and
// stop, drives the whole experiment.
//
// A tunnel carries one 16 MB response before any request is timed
// (warmTunnel), so that the requests meet a tunnel in its steady state,
// not its outer connection's startup. A request run keeps --parallel
// HTTP/1.1 connections alive, each asking
// for one response after another with a pause between them (as HIRT's
// wrk clients do), and times each request from its first byte sent to
// the response's last byte received. Overhead is what the emulated link
// carried in both directions beyond the response bodies, as a fraction of
// them, from the emulator's counters. Each result details its slowest
// requests with the packets the link dropped while they ran (the
// emulator's drop log) and the cause they name, and the inner TCP's
// retransmissions in both namespaces (requests_detail.go,
// requests_tcp.go): what the tail waited for.
//
// The programs' TCP sockets take their namespace's default congestion
// control, which a new namespace inherits from the host
// (net.ipv4.tcp_congestion_control). It decides much of a kept-alive
// connection's request time: Linux's BBR paces each response at its
// measured bandwidth, which for a connection that sends one small response
// per round trip is its own app-limited rate, so once its STARTUP has
// ended a 10 kB response takes about a round trip to leave (README,
// "bench tunnel").
//
// docs/architecture.md places the package: above gateway, which it
// drives, and bench, whose certificate, sizes and statistics it shares;
// below the command.
package tunnelbench
