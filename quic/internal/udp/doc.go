// Package udp reads and writes UDP datagrams in batches for the QUIC driver.
//
// A Conn wraps a net.PacketConn. On Linux, over a *net.UDPConn, it moves
// many datagrams per system call (recvmmsg and sendmmsg) and, where the
// kernel offers them, uses UDP generic segmentation offload (GSO, the
// UDP_SEGMENT option: one large send that the kernel or the NIC cuts into
// equal datagrams) and generic receive offload (GRO, UDP_GRO: several
// datagrams of one flow delivered as one buffer with their segment size).
// It carries the ECN codepoint of each datagram both ways (IP_TOS and
// IPV6_TCLASS control messages) and, on request, the local address a
// datagram arrived on (IP_PKTINFO, IPV6_PKTINFO). Sockets are set to never
// fragment (IP_MTU_DISCOVER set to probe), as QUIC requires (RFC 9000
// section 14), and their kernel buffers are raised for long fat paths.
//
// Everywhere else (another OS, the purego build tag, Options.Portable, or
// a PacketConn that is not a *net.UDPConn, such as netsim/memnet's
// in-memory one) a portable path does the same job with one ReadFrom per
// ReadBatch and one WriteTo per datagram, and reports what it cannot do
// through Capabilities.
//
// Buffers belong to the caller: ReadBatch receives into the Buf of the
// messages it is given, and WriteBatch sends their Data, so a read or write
// loop allocates nothing in steady state. A datagram split out of a GRO
// buffer is a sub-slice of the buffer it arrived in, never a copy.
//
// A Conn may read and write at the same time from two goroutines, but two
// ReadBatch calls (or two WriteBatch calls) must not overlap.
//
// On Linux, ListenReusePort binds a group of sockets to one address with
// SO_REUSEPORT, and AttachSteering attaches the classic BPF program of
// SteeringProgram to it (SO_ATTACH_REUSEPORT_CBPF), which picks the socket
// of each datagram from one octet of its QUIC Destination Connection ID;
// elsewhere both fail, and a server serves from one socket.
package udp
