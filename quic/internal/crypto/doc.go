// Package crypto implements QUIC packet protection: RFC 9001 (QUIC-TLS)
// sections 5 and 6 for QUIC version 1 and the changes of RFC 9369 for QUIC
// version 2.
//
// It is a pure library for the sans-IO connection core. It never reads the
// clock, starts goroutines or draws randomness on its own: time and entropy
// are arguments. The TLS handshake is driven elsewhere (crypto/tls's
// QUICConn); this package turns the secrets TLS hands out into keys:
//
//   - [NewInitial] derives the Initial keys of both directions from the
//     client's Destination Connection ID (RFC 9001 section 5.2).
//   - [New] builds one direction's keys from a TLS traffic secret and cipher
//     suite, exactly as a tls.QUICSetReadSecret or tls.QUICSetWriteSecret
//     event carries them (0-RTT, Handshake).
//   - [NewAppKeys] does the same for 1-RTT keys, adding key update
//     (RFC 9001 section 6): previous, current and next generations;
//     [NewSendAppKeys] for the sending direction, which derives the next
//     generation's packet key only when an update moves to it.
//
// A [PacketKey] seals and opens payloads in place with the header as
// associated data (section 5.3); a [HeaderKey] applies and removes header
// protection given the packet number offset (section 5.4). Neither allocates
// per packet. Neither is safe for concurrent use: a connection owns its keys.
//
// Beside packet protection live the Retry integrity tag (section 5.8), the
// AEAD usage limits (section 6.6), stateless reset tokens (RFC 9000 section
// 10.3.2), address validation tokens for Retry and NEW_TOKEN (RFC 9000
// section 8.1), and the sealed path states of the BDP frame
// ([PathStateSealer]): the congestion window and RTT a server saves for a
// client's next connection (RFC 9959), which the client carries but can
// neither read nor alter.
package crypto
