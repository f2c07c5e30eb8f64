package interop

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"slices"

	"github.com/satquic/satquic/interop/capture"
)

// outcome is what a check looks at: the capture, read as QUIC.
type outcome struct {
	c *Case
	a *capture.Analysis
}

// The checks below restate those of the runner's testcases_quic.py on
// the capture. Each returns the reasons it failed, none when it passed.

// serverInitials are the Initial packets the server sent.
func (o *outcome) packets(fromClient bool, t capture.PacketType) []*capture.Packet {
	var out []*capture.Packet
	for _, d := range o.a.Datagrams {
		for _, p := range d.Packets {
			if p.FromClient == fromClient && p.Type == t {
				out = append(out, p)
			}
		}
	}
	return out
}

// handshakes counts the connections the server answered, as the runner
// does: the distinct Source Connection IDs of its Initial packets. It
// leaves out the Initial packets the server sent in answer to corrupted
// ones, which the runner counts too: quic-go's server takes an Initial
// whose connection ID was corrupted for a new connection and, its
// handshake timeout later, closes it (CONNECTION_REFUSED), and ngtcp2's
// closes one with a corrupted token at once (INVALID_TOKEN); the capture
// shows it by opening those packets with the keys of the corrupted
// connection ID. stray counts them.
func (o *outcome) handshakes() (n, stray int) {
	var seen, strays [][]byte
	for _, p := range o.packets(false, capture.TypeInitial) {
		list := &seen
		if p.Stray {
			list = &strays
		}
		if !slices.ContainsFunc(*list, func(s []byte) bool { return bytes.Equal(s, p.SCID) }) {
			*list = append(*list, p.SCID)
		}
	}
	return len(seen), len(strays)
}

func versions(ps []*capture.Packet) []uint32 {
	var out []uint32
	for _, p := range ps {
		if !slices.Contains(out, p.Version) {
			out = append(out, p.Version)
		}
	}
	slices.Sort(out)
	return out
}

func versionList(vs []uint32) string {
	s := ""
	for i, v := range vs {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%#x", v)
	}
	return "[" + s + "]"
}

func (o *outcome) wantHandshakes(n int) []string {
	if got, stray := o.handshakes(); got != n {
		msg := fmt.Sprintf("%d handshakes, want %d", got, n)
		if stray > 0 {
			msg += fmt.Sprintf(" (and %d answers to corrupted packets)", stray)
		}
		return []string{msg}
	}
	return nil
}

// wantVersion1 is the runner's version check: the server's Initial
// packets are all QUIC v1.
func (o *outcome) wantVersion1() []string {
	vs := versions(o.packets(false, capture.TypeInitial))
	if len(vs) == 0 {
		return []string{"no Initial packet from the server"}
	}
	if len(vs) != 1 || vs[0] != capture.Version1 {
		return []string{fmt.Sprintf("server Initial versions %s, want only 0x1", versionList(vs))}
	}
	return nil
}

func checkTransfer(o *outcome) []string {
	return append(o.wantHandshakes(1), o.wantVersion1()...)
}

func checkHandshake(o *outcome) []string {
	out := checkTransfer(o)
	if n := len(o.packets(false, capture.TypeRetry)); n > 0 {
		out = append(out, fmt.Sprintf("the server sent %d Retry packets", n))
	}
	return out
}

func checkMulticonnect(o *outcome) []string {
	return append(o.wantHandshakes(multiconnectFiles), o.wantVersion1()...)
}

// checkLongRTT: with 750 ms each way, the client's first probe timeout
// comes before the server's answer, so it sent its ClientHello twice.
func checkLongRTT(o *outcome) []string {
	out := checkTransfer(o)
	hellos := 0
	for _, p := range o.packets(true, capture.TypeInitial) {
		if p.CryptoAtZero {
			hellos++
		}
	}
	if hellos < 2 {
		out = append(out, fmt.Sprintf("%d ClientHellos, want 2 or more", hellos))
	}
	return out
}

func checkChaCha20(o *outcome) []string {
	out := checkTransfer(o)
	for _, c := range o.a.Conns {
		switch {
		case c.ClientHello == nil:
			out = append(out, "no ClientHello could be read")
		case !slices.Equal(c.ClientHello.CipherSuites, []uint16{tls.TLS_CHACHA20_POLY1305_SHA256}):
			out = append(out, fmt.Sprintf("the client offered cipher suites %s, want ChaCha20 alone", suiteList(c.ClientHello.CipherSuites)))
		}
	}
	return out
}

func suiteList(ids []uint16) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += tls.CipherSuiteName(id)
	}
	return "[" + s + "]"
}

// maxStreamsBidi is the transport parameter initial_max_streams_bidi.
const maxStreamsBidi = 0x08

// checkMultiplexing: the server's stream limit is at most 1000, so the
// 1999 requests need it to raise the limit as they complete.
func checkMultiplexing(o *outcome) []string {
	out := checkTransfer(o)
	for _, c := range o.a.Conns {
		if c.ServerHello == nil {
			continue
		}
		v, ok := c.ServerParams[maxStreamsBidi]
		if !ok {
			out = append(out, noSecrets(c, "the server's stream limit"))
			continue
		}
		if n, _, ok := readVarint(v); !ok || n > 1000 {
			out = append(out, fmt.Sprintf("the server allowed %d bidirectional streams, more than 1000", n))
		}
	}
	return out
}

// noSecrets explains a check that needed the TLS secrets.
func noSecrets(c *capture.Conn, what string) string {
	if !c.Secrets {
		return "cannot read " + what + ": no TLS secrets in the key logs"
	}
	return "cannot read " + what + " from the capture"
}

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

// connsByHandshake are the connections the server answered, in order.
func (o *outcome) answered() []*capture.Conn {
	var out []*capture.Conn
	for _, c := range o.a.Conns {
		if c.ServerHello != nil {
			out = append(out, c)
		}
	}
	return out
}

// checkResumption: the second connection resumed the first one's session:
// its ServerHello accepted a pre-shared key, and no certificate came.
func checkResumption(o *outcome) []string {
	out := append(o.wantHandshakes(2), o.wantVersion1()...)
	conns := o.answered()
	if len(conns) != 2 {
		return append(out, fmt.Sprintf("%d connections with a ServerHello in the capture, want 2", len(conns)))
	}
	first, second := conns[0], conns[1]
	if first.ServerHello.PreSharedKey {
		out = append(out, "the first connection resumed a session")
	}
	if !second.ServerHello.PreSharedKey {
		out = append(out, "the second connection did not resume the session (no pre_shared_key in its ServerHello)")
	}
	if first.Secrets && !first.ServerCertificate {
		out = append(out, "no Certificate in the first handshake")
	}
	if second.Secrets && second.ServerCertificate {
		out = append(out, "the server sent a Certificate in the second handshake")
	}
	return out
}

// checkZeroRTT: the requests of the second connection went in 0-RTT
// packets, and little went in 1-RTT (at most half the request lines).
func checkZeroRTT(o *outcome) []string {
	out := append(o.wantHandshakes(2), o.wantVersion1()...)
	early, late := 0, 0
	for _, p := range o.packets(true, capture.Type0RTT) {
		early += p.PayloadLen
	}
	for _, p := range o.packets(true, capture.Type1RTT) {
		late += p.PayloadLen
	}
	if early == 0 {
		out = append(out, "the client sent no 0-RTT data")
	}
	if limit := zeroRTTNameLen * zeroRTTFiles / 2; late > limit {
		msg := fmt.Sprintf("the client sent %d bytes in 1-RTT packets, more than %d", late, limit)
		if conns := o.answered(); len(conns) == 2 && conns[1].Secrets {
			if conns[1].ServerEarlyData {
				msg += " (the server accepted 0-RTT)"
			} else {
				msg += " (the server rejected 0-RTT)"
			}
		}
		out = append(out, msg)
	}
	return out
}

// checkKeyUpdate: both ends sent 1-RTT packets with the key phase bit
// set, so the client updated its keys and the server followed.
func checkKeyUpdate(o *outcome) []string {
	out := checkTransfer(o)
	var phase1 [2]int
	opened := 0
	for _, fromClient := range []bool{true, false} {
		for _, p := range o.packets(fromClient, capture.Type1RTT) {
			if !p.HeaderOpened {
				continue
			}
			opened++
			if p.KeyPhase == 1 {
				phase1[dirIndex(fromClient)]++
			}
		}
	}
	if opened == 0 {
		for _, c := range o.a.Conns {
			return append(out, noSecrets(c, "the key phase bits"))
		}
	}
	if phase1[0] == 0 || phase1[1] == 0 {
		out = append(out, fmt.Sprintf("packets with key phase 1: %d from the client, %d from the server; want some both ways", phase1[0], phase1[1]))
	}
	return out
}

func dirIndex(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}

// checkECN: every QUIC datagram each way is ECT(0) or ECT(1) and none CE,
// and each end's ACK frames report ECN counts.
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

func checkIPv6(o *outcome) []string {
	out := checkTransfer(o)
	for _, d := range o.a.Datagrams {
		if !d.Server.Addr().Is6() || d.Server.Addr().Is4In6() || !d.Client.Addr().Is6() {
			return append(out, fmt.Sprintf("a datagram between %v and %v is not IPv6", d.Client, d.Server))
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

// readVarint reads a QUIC variable-length integer.
func readVarint(b []byte) (uint64, int, bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0, false
	}
	v := uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n, true
}
