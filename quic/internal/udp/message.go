package udp

import (
	"net/netip"

	"github.com/satquic/satquic/internal/ecn"
)

// Message is one datagram of a batch.
type Message struct {
	// Buf is storage the caller owns. ReadBatch receives into it when it
	// is not empty (its length is the room offered) and never changes the
	// field itself, so the same messages serve call after call. A message
	// with an empty Buf only carries a datagram split from another
	// message's GRO buffer. WriteBatch ignores Buf.
	Buf []byte
	// Data is the datagram. ReadBatch sets it to a sub-slice of this
	// message's Buf or, for a datagram split from a GRO buffer, of the Buf
	// it arrived in; it stays valid until that Buf is reused by a later
	// ReadBatch. WriteBatch sends it.
	Data []byte
	// BufIndex is, on read, the index in the messages given to ReadBatch
	// of the message whose Buf holds Data, so that a caller that hands
	// datagrams on by reference knows which buffer each one keeps busy.
	BufIndex int
	// Addr is the peer: the source on read, the destination on write.
	// IPv4 peers appear as IPv4 addresses even on a dual-stack socket.
	Addr netip.AddrPort
	// Local is the local address: on read, the destination address of the
	// datagram, when Options.PacketInfo is on (the zero Addr otherwise);
	// on write, when valid, the source address to send from.
	Local netip.Addr
	// IfIndex is the interface index that goes with Local: where the
	// datagram arrived, or where to send it (0: let routing choose).
	IfIndex int
	// ECN is the codepoint: the one the datagram arrived with, or the one
	// to send it with.
	ECN ecn.Codepoint
	// Truncated reports that the datagram was longer than the room left
	// for it, so Data holds only its beginning.
	Truncated bool
}

// NewMessages returns n messages, each with a bufSize-byte Buf cut from
// one allocation, ready for ReadBatch.
func NewMessages(n, bufSize int) []Message {
	if n <= 0 {
		return nil
	}
	msgs := make([]Message, n)
	if bufSize <= 0 {
		return msgs
	}
	arena := make([]byte, n*bufSize)
	for i := range msgs {
		msgs[i].Buf = arena[i*bufSize : (i+1)*bufSize : (i+1)*bufSize]
	}
	return msgs
}
