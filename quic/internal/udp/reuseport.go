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
// the order in which the sockets were bound. An index out of range falls
// back to the hash.

// hashFallback is the verdict that leaves the choice to the kernel's hash
// of the 4-tuple: no group is that large.
const hashFallback = 0xffffffff

// The QUIC versions whose Handshake packets the program steers, and how
// each writes the Handshake type into the first octet's type bits (RFC
// 9000 section 17.2; RFC 9369 section 3.2).
const (
	version1        = 0x00000001
	version2        = 0x6b3343cf
	longTypeMask    = 0x30
	v1HandshakeType = 0x20
	v2HandshakeType = 0x30
)

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
// that serves QUIC. It sees each datagram from its UDP payload on:
//   - a short-header packet (RFC 9000 section 17.3) goes to the socket
//     whose index its Destination Connection ID carries, so that every
//     datagram of a connection reaches the socket that owns it;
//   - a Handshake packet of QUIC v1 or v2 whose Destination Connection ID
//     has the server's length carries an ID the server chose, and is
//     steered the same way;
//   - any other long-header packet, a client's Initial or 0-RTT packet
//     whose Destination Connection ID the client chose, or a version this
//     program does not know, goes by the kernel's 4-tuple hash, which
//     sends all of one client's Initials, before and after a Retry, to
//     the same socket.
func SteeringProgram(s Steering) ([]bpf.RawInstruction, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	n := uint32(s.Sockets)
	// The long header's Destination Connection ID starts at octet 6:
	// first octet, version (4), length (1).
	shortIDOctet := uint32(1 + s.SocketOffset)
	longIDOctet := uint32(6 + s.SocketOffset)
	p := program{labels: map[string]int{}}
	p.add(bpf.LoadAbsolute{Off: 0, Size: 1})
	p.jump(bpf.JumpBitsSet, 0x80, "long", "")
	p.add(bpf.LoadAbsolute{Off: shortIDOctet, Size: 1})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: n})
	p.add(bpf.RetA{})

	p.label("long")
	p.add(bpf.LoadAbsolute{Off: 5, Size: 1})
	p.jump(bpf.JumpEqual, uint32(s.IDLen), "", "hash")
	p.add(bpf.LoadAbsolute{Off: 1, Size: 4})
	p.jump(bpf.JumpEqual, version1, "v1", "")
	p.jump(bpf.JumpEqual, version2, "v2", "hash")
	p.label("v1")
	p.add(bpf.LoadAbsolute{Off: 0, Size: 1})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: longTypeMask})
	p.jump(bpf.JumpEqual, v1HandshakeType, "steer", "hash")
	p.label("v2")
	p.add(bpf.LoadAbsolute{Off: 0, Size: 1})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: longTypeMask})
	p.jump(bpf.JumpEqual, v2HandshakeType, "steer", "hash")
	p.label("steer")
	p.add(bpf.LoadAbsolute{Off: longIDOctet, Size: 1})
	p.add(bpf.ALUOpConstant{Op: bpf.ALUOpMod, Val: n})
	p.add(bpf.RetA{})

	p.label("hash")
	p.add(bpf.RetConstant{Val: hashFallback})
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
