package udp

import (
	"errors"
	"fmt"

	"golang.org/x/net/bpf"
)

// A reuseport group is several UDP sockets bound to one address with
// SO_REUSEPORT: the kernel hands each arriving datagram to one of them.
// By default it picks by a hash of the datagram's addresses and ports; a
// classic BPF program attached to the group (SO_ATTACH_REUSEPORT_CBPF)
// picks instead, by returning the index of a socket in the group, which is
// the order in which the sockets were bound.

// Steering describes the connection IDs a reuseport group steers by: the
// IDs its server issues are IDLen octets long and octet SocketOffset of
// each holds a socket index, modulo Sockets.
type Steering struct {
	Sockets      int
	IDLen        int
	SocketOffset int
}

func (s Steering) validate() error {
	switch {
	case s.Sockets < 1 || s.Sockets > 255:
		return fmt.Errorf("udp: %d sockets in a reuseport group, not in [1, 255]", s.Sockets)
	case s.IDLen < 1 || s.IDLen > 20:
		return fmt.Errorf("udp: connection IDs of %d octets", s.IDLen)
	case s.SocketOffset < 0 || s.SocketOffset >= s.IDLen:
		return fmt.Errorf("udp: socket octet %d outside connection IDs of %d octets", s.SocketOffset, s.IDLen)
	}
	return nil
}

// SteeringProgram assembles the classic BPF program of a reuseport group
// that serves QUIC. It sees each datagram from its UDP payload on and
// returns the socket octet of the packet's Destination Connection ID
// modulo the group's size (RFC 8999 gives where the ID is, in any
// version):
//   - a short-header packet carries a connection ID the server issued,
//     which names the socket of its connection;
//   - a long-header packet carries one too once the client has heard from
//     the server (Handshake packets, later Initials); before that (a
//     client's first Initials, its 0-RTT packets, the Initials that answer
//     a Retry) it carries an ID the client chose, the same in every such
//     packet, whose octet at the same place, or its first octet if the ID
//     is too short, picks a socket at random but always the same one.
//
// So a connection belongs to the socket its first Initial reaches, every
// later datagram reaches that socket, and the connections of one client
// port spread over the group, which the kernel's hash of addresses and
// ports would not do.
func SteeringProgram(s Steering) ([]bpf.RawInstruction, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	n := uint32(s.Sockets)
	off := uint32(s.SocketOffset)
	p := program{labels: map[string]int{}}
	p.add(bpf.LoadAbsolute{Off: 0, Size: 1})
	p.jump(bpf.JumpBitsSet, 0x80, "long", "")
	// Short header: the connection ID follows the first octet.
	p.add(bpf.LoadAbsolute{Off: 1 + off, Size: 1})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: n})
	p.add(bpf.RetA{})

	// Long header: first octet, version (4), the connection ID's length
	// (octet 5), the connection ID from octet 6.
	p.label("long")
	p.add(bpf.LoadAbsolute{Off: 5, Size: 1})
	p.jump(bpf.JumpGreaterThan, off, "", "first")
	p.add(bpf.LoadAbsolute{Off: 6 + off, Size: 1})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: n})
	p.add(bpf.RetA{})
	p.label("first")
	p.add(bpf.LoadAbsolute{Off: 6, Size: 1})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: n})
	p.add(bpf.RetA{})
	return p.assemble()
}

// program is a classic BPF program under construction whose jumps name
// labels; classic BPF jumps count the instructions they skip, which
// assemble works out once every label is placed.
type program struct {
	insns  []bpf.Instruction
	jumps  map[int][2]string // instruction index -> labels if true, if false
	labels map[string]int
}

func (p *program) add(in bpf.Instruction) { p.insns = append(p.insns, in) }

func (p *program) label(name string) { p.labels[name] = len(p.insns) }

// jump adds a conditional jump; an empty label falls through.
func (p *program) jump(cond bpf.JumpTest, val uint32, ifTrue, ifFalse string) {
	if p.jumps == nil {
		p.jumps = map[int][2]string{}
	}
	p.jumps[len(p.insns)] = [2]string{ifTrue, ifFalse}
	p.add(bpf.JumpIf{Cond: cond, Val: val})
}

func (p *program) assemble() ([]bpf.RawInstruction, error) {
	for at, targets := range p.jumps {
		var skips [2]uint8
		for i, name := range targets {
			if name == "" {
				continue
			}
			to, ok := p.labels[name]
			if !ok || to <= at {
				return nil, errors.New("udp: BPF jump to a missing or earlier label " + name)
			}
			skips[i] = uint8(to - at - 1)
		}
		j := p.insns[at].(bpf.JumpIf)
		j.SkipTrue, j.SkipFalse = skips[0], skips[1]
		p.insns[at] = j
	}
	return bpf.Assemble(p.insns)
}
