package tunnelbench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// An XDP program on a veth end draws each IP packet that arrives on it
// and drops the asked share. XDP runs in the veth's receive loop before
// generic receive offload (GRO), so that the packets that survive are
// coalesced as a NIC's driver coalesces what a lossy link delivered: a
// buffer of many datagrams for the QUIC receiver's socket (40 per read in
// TestXDPLossKeepsGRO), not a system call and a pass of the stack per
// datagram, as after a drop at the netdev ingress hook (nft), which runs
// after GRO and so needs GRO off. With a program attached, the kernel
// turns segmentation offload off on the peer (drivers/net/veth.c,
// veth_fix_features): the sender's GSO batches are cut into datagrams
// before the veth, and each is drawn alone. It does not turn the veth's
// GRO on (rx-gro stayed off on Linux 6.18, one datagram per read), so
// attachXDPLoss does.

// groFeature is the kernel's name of GRO on a device (NETIF_F_GRO).
const groFeature = "rx-gro"

// The eBPF encoding (linux/bpf_common.h, linux/bpf.h) of the few
// instructions the program uses.
const (
	bpfLdxW    = 0x61 // BPF_LDX | BPF_MEM | BPF_W
	bpfLdxH    = 0x69 // BPF_LDX | BPF_MEM | BPF_H
	bpfMovReg  = 0xbf // BPF_ALU64 | BPF_MOV | BPF_X
	bpfMovImm  = 0xb7 // BPF_ALU64 | BPF_MOV | BPF_K
	bpfAddImm  = 0x07 // BPF_ALU64 | BPF_ADD | BPF_K
	bpfLdImm64 = 0x18 // BPF_LD | BPF_IMM | BPF_DW, two instructions
	bpfJgtReg  = 0x2d // BPF_JMP | BPF_JGT | BPF_X
	bpfJgeReg  = 0x3d // BPF_JMP | BPF_JGE | BPF_X, unsigned
	bpfJeqImm  = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
	bpfJneImm  = 0x55 // BPF_JMP | BPF_JNE | BPF_K
	bpfCall    = 0x85 // BPF_JMP | BPF_CALL
	bpfExit    = 0x95 // BPF_JMP | BPF_EXIT
	bpfPrandom = 7    // BPF_FUNC_get_prandom_u32
	xdpDrop    = 1    // XDP_DROP
	xdpPass    = 2    // XDP_PASS
	ethHdrLen  = 14
	ethTypeOff = 12
)

// bpfInsn is struct bpf_insn.
type bpfInsn struct {
	code uint8
	regs uint8 // dst in the low nibble, src in the high one
	off  int16
	imm  int32
}

func insn(code uint8, dst, src uint8, off int16, imm int32) bpfInsn {
	return bpfInsn{code: code, regs: dst | src<<4, off: off, imm: imm}
}

// xdpThreshold is the draw of bpf_get_prandom_u32 (uniform over 32 bits)
// below which a packet is dropped: percent of 2^32.
func xdpThreshold(percent float64) uint64 {
	return uint64(math.Round(percent / 100 * (1 << 32)))
}

// xdpLossProgram drops an IPv4 or IPv6 packet when a fresh random draw is
// below threshold and passes everything else: ARP above all, whose loss
// would stall the link for a second rather than lose a packet. Jump
// offsets count instructions from the one after the jump.
func xdpLossProgram(threshold uint64) []bpfInsn {
	// The EtherType as a 16-bit load in the host's byte order sees it.
	ipv4 := int32(binary.NativeEndian.Uint16([]byte{0x08, 0x00}))
	ipv6 := int32(binary.NativeEndian.Uint16([]byte{0x86, 0xdd}))
	const pass = 14 // index of the pass branch
	return []bpfInsn{
		/* 0 */ insn(bpfLdxW, 2, 1, 0, 0), // r2 = ctx->data
		/* 1 */ insn(bpfLdxW, 3, 1, 4, 0), // r3 = ctx->data_end
		/* 2 */ insn(bpfMovReg, 4, 2, 0, 0),
		/* 3 */ insn(bpfAddImm, 4, 0, 0, ethHdrLen),
		/* 4 */ insn(bpfJgtReg, 4, 3, pass-5, 0), // no Ethernet header: pass
		/* 5 */ insn(bpfLdxH, 5, 2, ethTypeOff, 0),
		/* 6 */ insn(bpfJeqImm, 5, 0, 1, ipv4),
		/* 7 */ insn(bpfJneImm, 5, 0, pass-8, ipv6),
		/* 8 */ insn(bpfCall, 0, 0, 0, bpfPrandom),
		/* 9 */ insn(bpfLdImm64, 1, 0, 0, int32(uint32(threshold))),
		/* 10 */ insn(0, 0, 0, 0, int32(uint32(threshold>>32))),
		/* 11 */ insn(bpfJgeReg, 0, 1, pass-12, 0), // draw >= threshold: pass
		/* 12 */ insn(bpfMovImm, 0, 0, 0, xdpDrop),
		/* 13 */ insn(bpfExit, 0, 0, 0, 0),
		/* 14 */ insn(bpfMovImm, 0, 0, 0, xdpPass),
		/* 15 */ insn(bpfExit, 0, 0, 0, 0),
	}
}

// progLoadAttr is the BPF_PROG_LOAD part of union bpf_attr.
type progLoadAttr struct {
	progType           uint32
	insnCnt            uint32
	insns              uint64
	license            uint64
	logLevel           uint32
	logSize            uint32
	logBuf             uint64
	kernVersion        uint32
	progFlags          uint32
	progName           [16]byte
	progIfindex        uint32
	expectedAttachType uint32
}

// linkCreateAttr is the BPF_LINK_CREATE part of union bpf_attr.
type linkCreateAttr struct {
	progFd     uint32
	ifindex    uint32
	attachType uint32
	flags      uint32
	_          [8]byte
}

func bpf(cmd int, attr unsafe.Pointer, size uintptr) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_BPF, uintptr(cmd), uintptr(attr), size)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// loadXDPLoss loads the program for percent and returns its descriptor;
// the verifier's log comes with an error.
func loadXDPLoss(percent float64) (int, error) {
	prog := xdpLossProgram(xdpThreshold(percent))
	license := []byte("GPL\x00")
	log := make([]byte, 4096)
	attr := progLoadAttr{
		progType: unix.BPF_PROG_TYPE_XDP, insnCnt: uint32(len(prog)),
		insns:    uint64(uintptr(unsafe.Pointer(&prog[0]))),
		license:  uint64(uintptr(unsafe.Pointer(&license[0]))),
		logLevel: 1, logSize: uint32(len(log)), logBuf: uint64(uintptr(unsafe.Pointer(&log[0]))),
		expectedAttachType: unix.BPF_XDP,
	}
	copy(attr.progName[:], "satquic_loss")
	fd, err := bpf(unix.BPF_PROG_LOAD, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	runtime.KeepAlive(prog)
	runtime.KeepAlive(license)
	if err != nil {
		if n := clen(log); n > 0 {
			return -1, fmt.Errorf("loading the XDP loss program: %w: %s", err, log[:n])
		}
		return -1, fmt.Errorf("loading the XDP loss program: %w", err)
	}
	return fd, nil
}

func clen(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// attachXDPLoss drops percent of the IP packets arriving on dev, in the
// calling thread's network namespace, in the driver's own XDP mode (a
// veth's receive loop with GRO, which it turns on). Closing what it
// returns detaches the program; deleting the device does too.
func attachXDPLoss(dev string, percent float64) (*xdpAttachment, error) {
	ifi, err := net.InterfaceByName(dev)
	if err != nil {
		return nil, err
	}
	prog, err := loadXDPLoss(percent)
	if err != nil {
		return nil, err
	}
	attr := linkCreateAttr{progFd: uint32(prog), ifindex: uint32(ifi.Index), attachType: unix.BPF_XDP, flags: unix.XDP_FLAGS_DRV_MODE}
	link, err := bpf(unix.BPF_LINK_CREATE, unsafe.Pointer(&attr), unsafe.Sizeof(attr))
	// The link holds the program from here on.
	_ = unix.Close(prog)
	if err != nil {
		return nil, fmt.Errorf("attaching the XDP loss program to %s: %w", dev, err)
	}
	a := &xdpAttachment{link: link}
	if err := setDeviceFeature(dev, groFeature, true); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

// xdpAttachment is an XDP program attached through a BPF link.
type xdpAttachment struct{ link int }

// Close detaches the program.
func (a *xdpAttachment) Close() error {
	if a == nil || a.link < 0 {
		return nil
	}
	err := unix.Close(a.link)
	a.link = -1
	return err
}

// errNoXDP: this kernel cannot load the loss program (no BPF system call,
// or not allowed), and loss falls back to nft or iptables.
var errNoXDP = errors.New("no XDP: the kernel refused the loss program")

// xdpAvailable reports whether the loss program loads here.
func xdpAvailable() error {
	fd, err := loadXDPLoss(1)
	if err != nil {
		return fmt.Errorf("%w: %v", errNoXDP, err)
	}
	return unix.Close(fd)
}
