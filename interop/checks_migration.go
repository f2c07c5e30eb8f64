//go:build linux

package interop

import (
	"bytes"
	"fmt"
	"net/netip"
	"slices"

	"github.com/satquic/satquic/interop/capture"
)

// The checks of the cases where the client's path changes: its NAT
// rebinds (rebind-port, rebind-addr) or it migrates (connectionmigration).
// A path is the client's address at the capture point (the server's is
// the same throughout).

// checkRebindPort: the transfer completed over more than one path, the
// server's first datagram on each new path carried a PATH_CHALLENGE (RFC
// 9000 section 9.3), and the client answered it with a PATH_RESPONSE, or
// answered a later challenge the server sent to that path when the link
// lost the first.
func checkRebindPort(o *outcome) []string {
	out := checkTransfer(o)
	challenges, paths, why := o.serverPathChallenges()
	if why != "" {
		return append(out, why)
	}
	if len(paths) <= 1 {
		return append(out, "the server saw only one path: the client's address never changed")
	}
	responses := o.clientPathResponses()
	for _, c := range challenges {
		if slices.Contains(responses, c.first) {
			continue
		}
		// The first challenge's datagram may be lost on the link after
		// the capture saw it; the server then challenges again (RFC 9000
		// section 8.2.1), and one answer validates the path.
		answered := slices.ContainsFunc(o.serverChallengesTo(c.path), func(d [8]byte) bool { return slices.Contains(responses, d) })
		if !answered {
			out = append(out, fmt.Sprintf("the server's PATH_CHALLENGE %x to %v got no PATH_RESPONSE, nor did any it sent there later", c.first, c.path))
		}
	}
	return out
}

// pathChallenge is the challenge of the server's first datagram on a
// new path.
type pathChallenge struct {
	path  netip.AddrPort
	first [8]byte
}

// serverChallengesTo are the data of every PATH_CHALLENGE the server sent
// to path.
func (o *outcome) serverChallengesTo(path netip.AddrPort) [][8]byte {
	var out [][8]byte
	for _, d := range o.a.Datagrams {
		if d.FromClient || d.Client != path {
			continue
		}
		for _, p := range d.Packets {
			out = append(out, p.PathChallenges...)
		}
	}
	return out
}

// checkRebindAddr: rebind-port's checks, and the server sent to more than
// one client IP address.
func checkRebindAddr(o *outcome) []string {
	var ips []netip.Addr
	for _, d := range o.a.Datagrams {
		if !d.FromClient && len(d.Packets) > 0 && !slices.Contains(ips, d.Client.Addr()) {
			ips = append(ips, d.Client.Addr())
		}
	}
	out := checkRebindPort(o)
	if len(ips) <= 1 {
		out = append(out, fmt.Sprintf("the server sent to %d client IP addresses, want more than one", len(ips)))
	}
	return out
}

// checkConnectionMigration: rebind-port's checks, and the client's first
// packet on each new path carried a connection ID it had not used on the
// path before (RFC 9000 section 9.5).
func checkConnectionMigration(o *outcome) []string {
	out := checkRebindPort(o)
	var last netip.AddrPort
	var seen []netip.AddrPort
	var dcid []byte
	for _, d := range o.a.Datagrams {
		if !d.FromClient || len(d.Packets) == 0 {
			continue
		}
		p := d.Packets[0]
		if !last.IsValid() {
			last, dcid = d.Client, p.DCID
			continue
		}
		if d.Client == last || slices.Contains(seen, d.Client) {
			continue
		}
		seen = append(seen, last)
		last = d.Client
		if bytes.Equal(p.DCID, dcid) {
			out = append(out, fmt.Sprintf("the client's first packet on the new path %v used the connection ID of the old one, %x", d.Client, dcid))
		}
		dcid = p.DCID
	}
	if len(seen) == 0 {
		out = append(out, "the client never sent from a new path")
	}
	return out
}

// serverPathChallenges walks the server's datagrams in order, as the
// runner does: each time they go to a path not seen before, the first
// must carry a PATH_CHALLENGE. It returns the challenges of those first
// datagrams and the paths seen, or why the walk failed.
func (o *outcome) serverPathChallenges() (challenges []pathChallenge, paths []netip.AddrPort, why string) {
	var last netip.AddrPort
	for _, d := range o.a.Datagrams {
		if d.FromClient || len(d.Packets) == 0 {
			continue
		}
		if !last.IsValid() {
			last = d.Client
			continue
		}
		if d.Client == last || slices.Contains(paths, d.Client) {
			continue
		}
		paths = append(paths, last)
		last = d.Client
		found, opened := false, false
		for _, p := range d.Packets {
			opened = opened || p.Opened
			for _, c := range p.PathChallenges {
				found = true
				challenges = append(challenges, pathChallenge{path: d.Client, first: c})
			}
		}
		switch {
		case !opened:
			return nil, nil, fmt.Sprintf("cannot read the server's first datagram on the new path %v", d.Client)
		case !found:
			return nil, nil, fmt.Sprintf("the server's first datagram on the new path %v had no PATH_CHALLENGE", d.Client)
		}
	}
	if last.IsValid() {
		paths = append(paths, last)
	}
	return challenges, paths, ""
}

// clientPathResponses are the data of every PATH_RESPONSE the client
// sent.
func (o *outcome) clientPathResponses() [][8]byte {
	var out [][8]byte
	for _, p := range o.packets(true, capture.Type1RTT) {
		out = append(out, p.PathResponses...)
	}
	return out
}
