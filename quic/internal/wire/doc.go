// Package wire encodes and decodes the QUIC version 1 and version 2 wire
// formats: variable-length integers (RFC 9000 section 16), packet headers
// and packet numbers (RFC 9000 section 17, RFC 9369), frames (RFC 9000
// section 19, RFC 9221 DATAGRAM) and transport parameters (RFC 9000
// section 18, RFC 9368 version_information), and satquic's experimental
// extensions: the FEC frames and parameter (frame_fec.go) and the BDP
// frame and parameter of Careful Resume (frame_bdp.go); and the ACK
// frequency extension's ACK_FREQUENCY and IMMEDIATE_ACK frames and
// min_ack_delay parameter (draft-ietf-quic-ack-frequency-14,
// frame_ackfreq.go), which FrameParser parses like the RFC's frames and
// the connection rejects unless it offered them.
//
// The package does no cryptography. Header parsers read only the parts of a
// header that packet protection leaves in the clear and report where the
// packet number starts, so that the caller can remove header protection
// (RFC 9001 section 5.4) and then read the packet number and the
// first-byte bits with ParsePacketNumber, PacketNumberLenFromFirstByte and
// CheckReservedBits. Frame parsers read decrypted payloads.
//
// Conventions:
//
//   - Writers are append-style: AppendXxx(b, ...) or x.Append(b) append the
//     encoding to b and return the extended slice. A writer whose input can
//     be invalid also returns an error; on error it returns b unchanged, so
//     a writer never emits bytes that do not round-trip.
//   - Readers are consume-style: ParseXxx(b) returns the value and how many
//     bytes of b it consumed. Malformed or truncated input gives an error,
//     never a panic. Frame and transport-parameter readers return a
//     *TransportError carrying the QUIC error code the connection must
//     close with (RFC 9000 section 20.1); header readers return plain
//     errors, because a malformed header means the datagram is dropped.
//   - Byte fields of parsed frames (STREAM, CRYPTO, DATAGRAM data, tokens)
//     alias the input buffer: nothing is copied on the hot path. Copy what
//     must outlive the packet buffer.
//   - FrameParser parses any frame without allocating in steady state: it
//     owns one value per frame type (and the ACK range slice) and reuses
//     them from call to call.
package wire
