// Package testkit is the harness shared by the tests that run satquic over
// real sockets and real time (packages quic, http3, bench, emulate and the
// command): one test certificate and TLS configurations that trust it,
// deterministic payloads and their digests, a goroutine leak check, and the
// skip rule of tests that need network namespaces.
//
// The other test levels have their own harness: components are tested with
// an explicit now in their packages, a connection core against a scripted
// peer with the core's lockstep pair, and whole endpoints over the
// simulated network with quic/internal/coresim (docs/architecture.md,
// "Testing").
package testkit
