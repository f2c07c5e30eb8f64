// Package capture reads QUIC out of the datagrams two endpoints exchanged,
// as the QUIC interop runner reads its packet captures, so that the
// interop matrix can check what went over the wire rather than what the
// endpoints say about themselves.
//
// The input is a list of Records: UDP payloads with their direction and
// time, as a recording proxy in front of the server sees them (Tap in
// package interop) or as a capture of IP packets holds them (ReadPcap,
// which also gives each datagram's ECN codepoint). Analyze splits the
// datagrams into QUIC packets, groups them into connections, and removes
// what protection it can:
//
//   - Long headers are plain text: versions, connection IDs, Retry and
//     Initial tokens, packet types and lengths need no key.
//   - Initial packets are protected with keys every observer can derive
//     from the client's first Destination Connection ID (RFC 9001 section
//     5.2, RFC 9369 section 3.3.1), so the ClientHello (cipher suites,
//     client random) and the ServerHello (chosen suite, whether a
//     pre-shared key resumed a session) are always read.
//   - Handshake, 0-RTT and 1-RTT packets need the TLS secrets, which
//     endpoints write in the NSS key log format (SSLKEYLOGFILE). With
//     them the analysis reads the server's EncryptedExtensions (transport
//     parameters) and Certificate, the key phase bit of every 1-RTT packet,
//     the ACK frames with ECN counts, and which 1-RTT packets are path MTU
//     probes (PING and PADDING alone, larger than 1200 bytes).
//
// A packet that cannot be parsed or opened (a corrupted one, or one whose
// keys are missing) is kept with what was learnt of it, and never makes
// the analysis fail: the interop cases with corruption send such packets
// on purpose.
package capture
