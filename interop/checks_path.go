//go:build linux

package interop

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/satquic/satquic/interop/capture"
)

// The checks of how the endpoints treat the path and the handshake's
// first packets: Retry, the amplification limit, ECN and the version.

// checkRetry: the server sent a Retry with a token, and the client's next
// Initial carried that token, with its packet numbers going on.
func checkRetry(o *outcome) []string {
	out := checkTransfer(o)
	var tokens [][]byte
	for _, p := range o.packets(false, capture.TypeRetry) {
		if len(p.Token) == 0 {
			out = append(out, "a Retry packet without a token")
		}
		tokens = append(tokens, p.Token)
	}
	if len(tokens) == 0 {
		return append(out, "no Retry packet")
	}
	highest, used := int64(-1), false
	for _, p := range o.packets(true, capture.TypeInitial) {
		if !p.HeaderOpened {
			continue
		}
		if len(p.Token) == 0 {
			highest = max(highest, int64(p.PN))
			continue
		}
		if int64(p.PN) <= highest {
			return append(out, fmt.Sprintf("the client's Initial with the token reused packet number %d", p.PN))
		}
		if slices.ContainsFunc(tokens, func(t []byte) bool { return bytes.Equal(t, p.Token) }) {
			used = true
			break
		}
	}
	if !used {
		out = append(out, "no client Initial carried the Retry token")
	}
	return out
}

// checkAmplification: before the client's address is validated (its
// first Handshake packet, or an Initial to a connection ID the server
// chose), the server sends at most three times what it received (the
// runner lets 3-4 times slide), and its certificate chain is long enough
// to need the limit.
func checkAmplification(o *outcome) []string {
	out := checkTransfer(o)
	for _, c := range o.answered() {
		switch {
		case !c.Secrets:
			out = append(out, noSecrets(c, "the server's Handshake CRYPTO data"))
		case c.ServerHandshakeCrypto < amplificationChain:
			out = append(out, fmt.Sprintf("the server sent %d bytes of Handshake CRYPTO data, fewer than %d: not the long chain", c.ServerHandshakeCrypto, amplificationChain))
		}
	}
	var serverCIDs [][]byte
	allowed, tolerated, sent := 0, 0, 0
	for _, d := range o.a.Datagrams {
		if len(d.Packets) == 0 {
			continue
		}
		if d.FromClient {
			validated := false
			for _, p := range d.Packets {
				validated = validated || p.Type == capture.TypeHandshake ||
					p.Type == capture.TypeInitial && len(p.DCID) >= 8 &&
						slices.ContainsFunc(serverCIDs, func(c []byte) bool { return bytes.Equal(c, p.DCID) })
			}
			if validated {
				return out
			}
			if d.Packets[0].Type == capture.TypeInitial {
				allowed += 3 * len(d.Data)
				tolerated += 4 * len(d.Data)
			}
			continue
		}
		for _, p := range d.Packets {
			if p.Type == capture.TypeInitial && len(p.SCID) >= 8 {
				serverCIDs = append(serverCIDs, p.SCID)
			}
		}
		sent += len(d.Data)
		if len(d.Data) >= tolerated {
			return append(out, fmt.Sprintf("the server sent %d bytes before the client's address was validated, more than 4 times what it received (%d)", sent, tolerated/4))
		}
		allowed -= len(d.Data)
		tolerated -= len(d.Data)
	}
	return append(out, "the client never sent a Handshake packet")
}

// amplificationChain is the least Handshake CRYPTO data of a server with
// the runner's nine-certificate chain.
const amplificationChain = 7500

// checkECN: each end marked its datagrams ECT(0) or ECT(1), none arrived
// CE, and each end's ACK frames report ECN counts (the runner's current
// check, which lets an end leave some datagrams unmarked, as one does
// while it tests the path).
func checkECN(o *outcome) []string {
	out := checkHandshake(o)
	var marked, unmarked, ce [2]int
	var ackECN [2]bool
	for _, d := range o.a.Datagrams {
		if len(d.Packets) == 0 {
			continue
		}
		i := dirIndex(d.FromClient)
		switch d.ECN {
		case 1, 2:
			marked[i]++
		case 3:
			ce[i]++
		case 0:
			unmarked[i]++
		default:
			return append(out, "the capture does not show ECN codepoints")
		}
		for _, p := range d.Packets {
			ackECN[i] = ackECN[i] || p.AckECN
		}
	}
	for i, who := range []string{"client", "server"} {
		if marked[i] == 0 {
			out = append(out, fmt.Sprintf("the %s marked none of its %d datagrams ECT", who, unmarked[i]))
		}
		if ce[i] > 0 {
			out = append(out, fmt.Sprintf("%d of the %s's datagrams arrived CE", ce[i], who))
		}
		if !ackECN[i] {
			out = append(out, fmt.Sprintf("the %s sent no ACK frame with ECN counts", who))
		}
	}
	return out
}

// checkV2: the client started in v1, the server's Initial packets moved
// to v2, and every Handshake packet both ways is v2.
func checkV2(o *outcome) []string {
	var out []string
	if vs := versions(o.packets(true, capture.TypeInitial)); !slices.Contains(vs, capture.Version1) {
		out = append(out, fmt.Sprintf("client Initial versions %s, want 0x1 among them", versionList(vs)))
	}
	if vs := versions(o.packets(false, capture.TypeInitial)); !slices.Contains(vs, capture.Version2) {
		out = append(out, fmt.Sprintf("server Initial versions %s, want %#x among them", versionList(vs), capture.Version2))
	}
	for _, who := range []bool{true, false} {
		name := map[bool]string{true: "client", false: "server"}[who]
		if vs := versions(o.packets(who, capture.TypeHandshake)); len(vs) != 1 || vs[0] != capture.Version2 {
			out = append(out, fmt.Sprintf("%s Handshake versions %s, want only %#x", name, versionList(vs), capture.Version2))
		}
	}
	return out
}
