package capture

import (
	"bytes"
	"net/netip"
	"slices"
)

// The connection a packet belongs to, from its connection IDs and the
// client's address.

// tracker finds the connection of each packet.
type tracker struct {
	byClientCID map[connKey]*Conn
	byFlow      map[netip.AddrPort][]*Conn
	// latest is the connection whose first packet came last.
	latest *Conn
}

// connKey names a connection by its client's address and connection ID:
// a client that owns its socket may use a zero-length connection ID (as
// quic-go's does), which only the address then tells apart.
type connKey struct {
	client netip.AddrPort
	cid    string
}

func (t *tracker) assign(a *Analysis, p *Packet, r *Record) {
	switch {
	case p.Type == Type1RTT:
		p.Conn = t.shortHeaderConn(p, r)
	case r.FromClient:
		key := connKey{r.Client, string(p.SCID)}
		c := t.byClientCID[key]
		if c == nil && (p.Type == TypeInitial || p.Type == Type0RTT) {
			c = &Conn{Client: r.Client, ClientCID: bytes.Clone(p.SCID), keyDCID: bytes.Clone(p.DCID)}
			c.largest = [2][3]int64{{-1, -1, -1}, {-1, -1, -1}}
			t.byClientCID[key] = c
			t.byFlow[r.Client] = append(t.byFlow[r.Client], c)
			a.Conns = append(a.Conns, c)
			t.latest = c
		}
		p.Conn = c
	default:
		c := t.byClientCID[connKey{r.Client, string(p.DCID)}]
		p.Conn = c
		if c == nil {
			return
		}
		switch p.Type {
		case TypeInitial:
			if !slices.ContainsFunc(c.ServerCIDs, func(s []byte) bool { return bytes.Equal(s, p.SCID) }) {
				c.ServerCIDs = append(c.ServerCIDs, bytes.Clone(p.SCID))
			}
		case TypeRetry:
			c.RetrySCIDs = append(c.RetrySCIDs, bytes.Clone(p.SCID))
		}
	}
	if p.Conn != nil && p.Type != Type1RTT && p.Type != TypeRetry && p.Type != TypeVersionNegotiation {
		p.Conn.version = p.Version
	}
}

// shortHeaderConn finds the connection of a 1-RTT packet among those of
// its flow: the one whose connection ID it carries, or else the latest
// (an endpoint may switch to a connection ID issued in an encrypted
// frame); its packet number offset follows.
func (t *tracker) shortHeaderConn(p *Packet, r *Record) *Conn {
	conns := t.byFlow[r.Client]
	if len(conns) == 0 && t.latest != nil {
		// A flow that starts with 1-RTT packets is a connection that
		// moved: its client's NAT rebound, or the client migrated
		// (RFC 9000 section 9). It is taken for the latest connection,
		// which the cases that move have only one of.
		conns = []*Conn{t.latest}
		t.byFlow[r.Client] = conns
	}
	var found *Conn
	var cidLen int
	for _, c := range slices.Backward(conns) {
		cids := c.ServerCIDs
		if !r.FromClient {
			cids = [][]byte{c.ClientCID}
		}
		for _, cid := range cids {
			if len(p.raw.data) > len(cid) && bytes.Equal(p.raw.data[1:1+len(cid)], cid) {
				found, cidLen = c, len(cid)
				break
			}
		}
		if found != nil {
			break
		}
	}
	if found == nil && len(conns) > 0 {
		found = conns[len(conns)-1]
		if r.FromClient && len(found.ServerCIDs) > 0 {
			cidLen = len(found.ServerCIDs[0])
		} else if !r.FromClient {
			cidLen = len(found.ClientCID)
		} else {
			return nil
		}
	}
	if found == nil || len(p.raw.data) < 1+cidLen {
		// Too short for the connection ID: a damaged datagram.
		return nil
	}
	p.DCID = p.raw.data[1 : 1+cidLen]
	p.raw.pnOffset = 1 + cidLen
	return found
}

func dirOf(fromClient bool) int {
	if fromClient {
		return 0
	}
	return 1
}
