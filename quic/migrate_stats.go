package quic

// MigrationStats count a connection's path changes (RFC 9000 section 9)
// and path validations (section 8.2).
type MigrationStats struct {
	// PeerAddressChanges counts the times the peer's address changed
	// and the connection followed it (a server after a NAT rebinding or
	// the client's migration), PortChanges those where only the port
	// changed.
	PeerAddressChanges, PortChanges uint64
	// Validations counts the validations of a new peer address started,
	// ValidationsSucceeded and ValidationsFailed how they ended.
	Validations, ValidationsSucceeded, ValidationsFailed uint64
	// Reverts counts the returns to the last validated address after a
	// validation failed.
	Reverts uint64
	// CongestionResets counts the restarts of congestion control and
	// RTT estimation on a new path.
	CongestionResets uint64
	// ChallengesSent and ResponsesSent count PATH_CHALLENGE and
	// PATH_RESPONSE frames.
	ChallengesSent, ResponsesSent uint64
	// Migrations counts this client's moves to a new socket (Migrate),
	// ProbesFailed the probes of a new path that got no answer.
	Migrations, ProbesFailed uint64
	// SilencePings counts a client's PINGs, expanded to 1200 bytes, after
	// a probe timeout without the stream data it expected: after a NAT
	// rebinding they tell the server the new address.
	SilencePings uint64
	// UnknownServerAddress counts the datagrams a client dropped because
	// they came from an address other than the server's (RFC 9000
	// section 9): neither the address in use, nor its preferred address
	// while the client probes it, nor, for a while after the move, the
	// address it left for the preferred one.
	UnknownServerAddress uint64
}
