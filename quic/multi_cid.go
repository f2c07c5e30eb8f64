package quic

import (
	"fmt"
	"io"
)

// connIDScheme makes the connection IDs a Transport issues: random, or in
// QUIC-LB's format, and with several sockets one octet that names the
// socket a connection belongs to.
type connIDScheme struct {
	lb      *QUICLB // nil: random connection IDs
	sockets int
	// offset is the socket octet's place in a connection ID: the first
	// octet of a random ID, the first of the nonce of a QUIC-LB one, so
	// that the config rotation bits and the server ID stay as the load
	// balancer reads them.
	offset int
}

// newConnIDScheme checks the connection ID settings of t: the QUIC-LB
// configuration decides the length, and ConnectionIDLength, if set, must
// agree.
func newConnIDScheme(t *Transport) (connIDScheme, int, error) {
	s := connIDScheme{lb: t.LoadBalancer, sockets: 1 + len(t.groupConns)}
	n := t.ConnectionIDLength
	if n == 0 {
		n = DefaultConnectionIDLength
	}
	if s.lb != nil {
		if err := s.lb.validate(); err != nil {
			return s, 0, err
		}
		if t.ConnectionIDLength != 0 && t.ConnectionIDLength != s.lb.Len() {
			return s, 0, fmt.Errorf("quic: ConnectionIDLength %d, but the QUIC-LB configuration makes %d", t.ConnectionIDLength, s.lb.Len())
		}
		n = s.lb.Len()
		s.offset = 1 + len(s.lb.ServerID)
	}
	return s, n, nil
}

// generator returns the core's Config.NewConnID for a connection of the
// socket with index socket, or nil where random IDs serve.
func (s connIDScheme) generator(socket int) func(id []byte, r io.Reader) error {
	if s.lb == nil && s.sockets <= 1 {
		return nil
	}
	return func(id []byte, r io.Reader) error {
		if s.lb != nil {
			if err := s.lb.encode(id, r); err != nil {
				return err
			}
		} else if _, err := io.ReadFull(r, id); err != nil {
			return err
		}
		if s.sockets > 1 {
			id[s.offset] = socketOctet(id[s.offset], socket, s.sockets)
		}
		return nil
	}
}

// socketOctet turns a random octet into one that is index modulo n, which
// the steering program computes, keeping as much of its randomness as it
// can: connection IDs of one socket do not all share one octet.
func socketOctet(random byte, index, n int) byte {
	v := int(random)/n*n + index
	if v > 255 {
		v -= n
	}
	return byte(v)
}
