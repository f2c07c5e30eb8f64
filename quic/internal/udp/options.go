package udp

import (
	"fmt"
	"strings"
	"sync/atomic"
)

const (
	// DefaultSocketBuffer is the kernel socket buffer size Conn asks for
	// in each direction: enough for a few milliseconds of a 10 Gbit/s
	// burst, or the reordering window of a long fat satellite path.
	DefaultSocketBuffer = 8 << 20
	// DefaultMaxDatagramSize is the buffer NewReadBatch gives a message
	// when GRO is off: an Ethernet MTU, more than any QUIC datagram a
	// 1500-byte path can carry.
	DefaultMaxDatagramSize = 1500
	// GROBufferSize is the buffer a message needs to receive a GRO buffer
	// whole: the kernel coalesces up to 64 KiB. A shorter buffer gets the
	// datagrams that fit and loses the rest.
	GROBufferSize = 1 << 16
	// MaxGSOSegments is the most datagrams one GSO send carries
	// (UDP_MAX_SEGMENTS of older kernels, the limit every kernel accepts).
	MaxGSOSegments = 64
	// maxGSOBytes bounds the payload of one GSO send: a UDP datagram in
	// IPv4 carries at most 65535-20-8 bytes.
	maxGSOBytes = 65507
)

// Options configures a Conn. The zero value asks for every capability the
// platform offers.
type Options struct {
	// SocketBuffer is the size to ask for SO_RCVBUF and SO_SNDBUF (with
	// SO_RCVBUFFORCE and SO_SNDBUFFORCE first, which pass the system limit
	// when the process may). Zero means DefaultSocketBuffer; negative
	// leaves the kernel's defaults.
	SocketBuffer int
	// MaxDatagramSize is the buffer size NewReadBatch uses when GRO is off.
	// Zero means DefaultMaxDatagramSize.
	MaxDatagramSize int
	// PacketInfo asks for the local destination address of each received
	// datagram (Message.Local), which a server bound to a wildcard address
	// needs to answer from the address it was reached at.
	PacketInfo bool
	// DisableGSO, DisableGRO and DisableECN turn those capabilities off.
	DisableGSO bool
	DisableGRO bool
	DisableECN bool
	// Portable forces the portable path (one ReadFrom per ReadBatch, one
	// WriteTo per datagram) even where batching is available. Socket
	// buffers and the don't-fragment setting still apply.
	Portable bool
}

func (o Options) socketBuffer() int {
	if o.SocketBuffer == 0 {
		return DefaultSocketBuffer
	}
	return o.SocketBuffer
}

func (o Options) maxDatagramSize() int {
	if o.MaxDatagramSize <= 0 {
		return DefaultMaxDatagramSize
	}
	return o.MaxDatagramSize
}

// Capabilities is what a Conn found it can do when it was opened, and
// what it has given up since (GSO, when a device refused it).
type Capabilities struct {
	// Batch: recvmmsg and sendmmsg move many datagrams per system call.
	// False on the portable path.
	Batch bool
	// GSO: WriteBatch sends runs of equal datagrams to one peer as one
	// segmentation-offload send.
	GSO bool
	// GSOError is why GSO was turned off after the Conn was opened, when
	// it was (empty otherwise).
	GSOError string
	// GRO: the kernel may deliver several datagrams of a flow as one
	// buffer, which ReadBatch splits.
	GRO bool
	// ECN: received datagrams report their ECN codepoint and sent ones
	// carry the codepoint asked for.
	ECN bool
	// PacketInfo: received datagrams report their local address, and sent
	// ones may choose theirs.
	PacketInfo bool
	// DontFragment: the socket never fragments (path MTU discovery set to
	// probe), so QUIC's own PMTU probing sees the real limit.
	DontFragment bool
	// ReceiveBuffer and SendBuffer are the socket buffer sizes the kernel
	// granted, as it reports them (Linux reports twice the usable size,
	// counting its bookkeeping). Zero when unknown.
	ReceiveBuffer int
	SendBuffer    int
}

// String lists the capabilities for a log line, for example
// "batch gso gro ecn df rcvbuf=16777216 sndbuf=16777216".
func (c Capabilities) String() string {
	var parts []string
	flag := func(on bool, name string) {
		if on {
			parts = append(parts, name)
		}
	}
	if !c.Batch {
		parts = append(parts, "portable")
	}
	flag(c.Batch, "batch")
	flag(c.GSO, "gso")
	flag(c.GRO, "gro")
	flag(c.ECN, "ecn")
	flag(c.PacketInfo, "pktinfo")
	flag(c.DontFragment, "df")
	if c.GSOError != "" {
		parts = append(parts, fmt.Sprintf("gso-off=%q", c.GSOError))
	}
	if c.ReceiveBuffer > 0 {
		parts = append(parts, fmt.Sprintf("rcvbuf=%d", c.ReceiveBuffer))
	}
	if c.SendBuffer > 0 {
		parts = append(parts, fmt.Sprintf("sndbuf=%d", c.SendBuffer))
	}
	return strings.Join(parts, " ")
}

// Stats counts a Conn's traffic since it was opened.
type Stats struct {
	ReadCalls      uint64 // system calls (or ReadFroms) that returned datagrams
	ReadDatagrams  uint64 // datagrams returned by ReadBatch
	GROBuffers     uint64 // received buffers that held more than one datagram
	WriteCalls     uint64 // system calls (or WriteTos) that sent datagrams
	WriteDatagrams uint64 // datagrams sent by WriteBatch
	GSOSends       uint64 // GSO sends of more than one datagram
}

// counters is the live form of Stats, updated once per batch.
type counters struct {
	readCalls, readDatagrams, groBuffers atomic.Uint64
	writeCalls, writeDatagrams, gsoSends atomic.Uint64
}

func (c *counters) snapshot() Stats {
	return Stats{
		ReadCalls:      c.readCalls.Load(),
		ReadDatagrams:  c.readDatagrams.Load(),
		GROBuffers:     c.groBuffers.Load(),
		WriteCalls:     c.writeCalls.Load(),
		WriteDatagrams: c.writeDatagrams.Load(),
		GSOSends:       c.gsoSends.Load(),
	}
}
