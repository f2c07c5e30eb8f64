//go:build linux

package interop

import "strings"

// knownIssue is a failure whose cause was found outside satquic, in a
// peer or in a library satquic shares with it. The matrix still shows
// the cell as failed, marked and explained, and the verdict does not
// count it. Each names the symptom it excuses, so that the same cell
// failing any other way still counts.
type knownIssue struct {
	// c, client and server name the cells; an empty server is any.
	c, client, server string
	// symptom is part of the failure's reason.
	symptom string
	why     string
}

var knownIssues = []knownIssue{
	{c: "zerortt", client: "satquic", server: "ngtcp2", symptom: "(the server rejected 0-RTT)",
		why: "ngtcp2 0.12.1's server rejects the early data of every crypto/tls client, quic-go's as well: " +
			"crypto/tls keeps a session's creation time in whole seconds, so the ticket age it sends is up to " +
			"a second more than the server's own measure, and GnuTLS 3.7's anti-replay check takes a client age " +
			"above the server's for a replay (GNUTLS_DEBUG_LEVEL=4: \"replay detected; rejecting early data\")"},
}

func init() {
	// ngtcp2's client probes the path MTU at the end of its handshake,
	// and the runner's 0-RTT check counts the probes' PADDING.
	knownIssues = append(knownIssues, knownIssue{c: "zerortt", client: "ngtcp2", server: "satquic",
		symptom: "path MTU probes, without which the limit holds (the server accepted 0-RTT)",
		why: "gtlsclient probes the path MTU once its handshake is done: in each connection a 1406-byte datagram of PING and " +
			"1379 bytes of PADDING, and, once that is acknowledged, one of 1444 bytes; the runner counts them as 1-RTT data. " +
			"Its second probe goes out when the ACK of the first reaches it before the last response: ngtcp2's server answers " +
			"0.6 ms after the request, before the first probe arrives, while satquic's HTTP/3 server takes 2 to 13 ms, and a " +
			"packet it sends meanwhile (its HANDSHAKE_DONE, when the probe came in before it) carries that ACK. A failed " +
			"run: 5316 bytes, 4178 of them in three probes (1406, 1444 and 1406 bytes), the rest the 1-RTT packets beside the two " +
			"Finished messages (the first padded to 1200 bytes), an ACK and the close; all 39 requests of the second connection went in 0-RTT; ngtcp2 against itself sends 4018 bytes, 2740 in two probes"})

	// ngtcp2's server checks an Initial's token before it authenticates
	// the packet, whose header (token included) the AEAD covers.
	for _, c := range []string{"handshakecorruption", "transfercorruption"} {
		knownIssues = append(knownIssues, knownIssue{c: c, client: "satquic", server: "ngtcp2", symptom: "remote INVALID_TOKEN",
			why: "the link corrupted the Retry token of satquic's Initial, and ngtcp2 0.12.1's server closed the connection with " +
				"INVALID_TOKEN without authenticating that packet (RFC 9000 section 8.1.3 wants the close only for an Initial that is " +
				"otherwise valid), in a packet sealed with the connection's true Initial keys, which the client has to obey"})
	}

	// ngtcp2's client gives up a handshake after its default of 10 s.
	for _, c := range []string{"handshakeloss", "handshakecorruption"} {
		knownIssues = append(knownIssues, knownIssue{c: c, client: "ngtcp2", server: "satquic", symptom: "ERR_HANDSHAKE_TIMEOUT",
			why: "gtlsclient gives up a handshake after 10 s (its --handshake-timeout default); at 30% loss or corruption in runs " +
				"of up to 3 its first Initial packets can be lost for several of its probe timeouts (1, 2, 4 s), and ngtcp2 " +
				"against itself fails these cases the same way"})
	}

	// ngtcp2's client can lose its Finished for good: its handshake is
	// complete once Finished is sent, and it then probes only in 1-RTT.
	for _, c := range []string{"handshakeloss", "handshakecorruption"} {
		knownIssues = append(knownIssues, knownIssue{c: c, client: "ngtcp2", server: "satquic", symptom: "ERR_DRAINING",
			why: "the link lost the Handshake packets with gtlsclient's Finished, and gtlsclient never sent it again: after them " +
				"its only Handshake packet acknowledged the server's flight without a CRYPTO frame, and for the next 22 s it sent " +
				"1-RTT PING and PADDING packets only, which a server whose handshake is not complete must not process (RFC 9001 " +
				"section 5.7); satquic's server ended the handshake at its 20 s timeout with a CONNECTION_CLOSE, which drained the client"})
	}

	// A Version Negotiation packet carries no authentication, and the
	// emulator corrupts it like any packet, where the runner's
	// corrupt-rate model spares it. A corrupted one that no longer lists
	// the client's version sends satquic's client to the other version it
	// lists, and the server's version_information then shows the client
	// it was downgraded: it closes with VERSION_NEGOTIATION_ERROR, as RFC
	// 9368 section 4 wants. (The capture, taken at the server, holds the
	// packet intact: it lists v1, which satquic's client does not act on.)
	for _, c := range []string{"handshakecorruption", "transfercorruption"} {
		knownIssues = append(knownIssues, knownIssue{c: c, client: "satquic", symptom: "VERSION_NEGOTIATION_ERROR",
			why: "the emulator corrupted a Version Negotiation packet (the runner's corrupt-rate model spares them) so that it " +
				"no longer listed v1; satquic's client moved to v2 and, seeing the server's full list, closed on the downgrade as RFC 9368 wants"})
	}
}

// known returns the explanation of a failed cell, or "" if its failure
// is not a known one.
func known(r Result) string {
	for _, k := range knownIssues {
		if r.Status == Fail && k.c == r.Case && k.client == r.Client && (k.server == "" || k.server == r.Server) &&
			strings.Contains(r.Reason, k.symptom) {
			return k.why
		}
	}
	return ""
}
