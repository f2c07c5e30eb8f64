package udp

import (
	"testing"

	"golang.org/x/net/bpf"
)

// steeringVM runs the steering program for s on a datagram's UDP payload
// in x/net's classic BPF interpreter.
func steeringVM(t *testing.T, s Steering) *bpf.VM {
	t.Helper()
	raw, err := SteeringProgram(s)
	if err != nil {
		t.Fatal(err)
	}
	insns, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("the program does not disassemble")
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	return vm
}

// longPacket is the start of a long-header packet: first octet, version,
// and a Destination Connection ID.
func longPacket(first byte, version uint32, dcid []byte) []byte {
	b := []byte{first, byte(version >> 24), byte(version >> 16), byte(version >> 8), byte(version), byte(len(dcid))}
	b = append(b, dcid...)
	return append(b, 0, 1, 2, 3) // SCID length and more
}

func TestSteeringProgramVerdicts(t *testing.T) {
	s := Steering{Sockets: 3, IDLen: 8, SocketOffset: 2}
	vm := steeringVM(t, s)
	ours := []byte{0xaa, 0xbb, 7, 1, 2, 3, 4, 5}             // octet 2: 7 % 3 = 1
	clients := []byte{0x05, 0x11, 0x0b, 9, 9, 9, 9, 9, 9, 9} // octet 2: 11 % 3 = 2
	short := append([]byte{0x41}, ours...)
	short = append(short, make([]byte, 20)...)
	cases := []struct {
		name string
		pkt  []byte
		want int
	}{
		{"short header", short, 1},
		{"v1 Handshake", longPacket(0xe0, 1, ours), 1},
		{"v2 Handshake", longPacket(0xf0, 0x6b3343cf, ours), 1},
		{"Initial to the server's ID", longPacket(0xc0, 1, ours), 1},
		{"client's first Initial", longPacket(0xc0, 1, clients), 2},
		{"client's 0-RTT", longPacket(0xd0, 1, clients), 2},
		{"unknown version", longPacket(0xc0, 0x1a2a3a4a, clients), 2},
		{"client ID shorter than the socket octet", longPacket(0xc0, 1, []byte{0x04, 0xff}), 1},
		{"empty", nil, 0},
	}
	for _, c := range cases {
		got, err := vm.Run(c.pkt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got != c.want {
			t.Errorf("%s: socket %d, want %d", c.name, got, c.want)
		}
	}
}

// TestSteeringProgramEveryIndex checks that every value of the socket
// octet steers to its index modulo the group's size.
func TestSteeringProgramEveryIndex(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		vm := steeringVM(t, Steering{Sockets: n, IDLen: 4, SocketOffset: 0})
		for v := range 256 {
			got, err := vm.Run([]byte{0x40, byte(v), 1, 2, 3, 4, 5, 6})
			if err != nil {
				t.Fatal(err)
			}
			if got != v%n {
				t.Fatalf("%d sockets, octet %d: socket %d", n, v, got)
			}
		}
	}
}

func TestSteeringProgramRefusesBadShapes(t *testing.T) {
	for _, s := range []Steering{
		{Sockets: 0, IDLen: 8},
		{Sockets: 256, IDLen: 8},
		{Sockets: 2, IDLen: 0},
		{Sockets: 2, IDLen: 21},
		{Sockets: 2, IDLen: 8, SocketOffset: 8},
		{Sockets: 2, IDLen: 8, SocketOffset: -1},
	} {
		if _, err := SteeringProgram(s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}
