//go:build linux

package interop

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/satquic/satquic/internal/varint"
	"github.com/satquic/satquic/interop/capture"
)

// outcome is what a check looks at: the capture, read as QUIC. The checks
// restate those of the runner's testcases_quic.py on the capture; each
// returns the reasons it failed, none when it passed.
type outcome struct {
	c *Case
	a *capture.Analysis
}

// packets are the packets of type t one end sent.
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
// closes one with a corrupted token at once (INVALID_TOKEN). The capture
// tells them (capture.Packet.Stray) by the keys that open them: those of
// the corrupted connection ID. stray counts them.
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

// noSecrets explains a check that needed the TLS secrets.
func noSecrets(c *capture.Conn, what string) string {
	if !c.Secrets {
		return "cannot read " + what + ": no TLS secrets in the key logs"
	}
	return "cannot read " + what + " from the capture"
}

// answered are the connections the server answered, in order.
func (o *outcome) answered() []*capture.Conn {
	var out []*capture.Conn
	for _, c := range o.a.Conns {
		if c.ServerHello != nil {
			out = append(out, c)
		}
	}
	return out
}

func dirIndex(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}

// readVarint reads a QUIC variable-length integer.
func readVarint(b []byte) (uint64, int, bool) {
	v, n := varint.Parse(b)
	return v, n, n > 0
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

func checkIPv6(o *outcome) []string {
	out := checkTransfer(o)
	for _, d := range o.a.Datagrams {
		if !d.Server.Addr().Is6() || d.Server.Addr().Is4In6() || !d.Client.Addr().Is6() {
			return append(out, fmt.Sprintf("a datagram between %v and %v is not IPv6", d.Client, d.Server))
		}
	}
	return out
}
