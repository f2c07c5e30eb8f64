package core

import "sync"

// Stream and CRYPTO data live in fixed-size blocks that all connections of
// the process share through pools: a buffer gives a block back as soon as
// its bytes were read (receiving) or acknowledged (sending), and the next
// buffer that needs one takes it. A transfer in steady state then copies
// each byte once into a block and once out of it, without allocating, and
// the garbage collector has little to do: blocks hold no pointers, and
// sync.Pool lets go of blocks nobody asked for since the last collection.
// Pools hold no state a connection can observe, so runs stay replayable.

// sendBlockSize is the size of a send buffer's blocks: large enough that
// most STREAM frames come from one block without a copy (sendBuffer.view).
const sendBlockSize = 16 << 10

// recvBlockSize is the size of a receive buffer's blocks: small enough that
// a stream holding a short message unread costs little, large enough that
// a read copies long runs.
const recvBlockSize = 4 << 10

type (
	sendBlock [sendBlockSize]byte
	recvBlock [recvBlockSize]byte
)

var (
	sendBlocks = sync.Pool{New: func() any { return new(sendBlock) }}
	recvBlocks = sync.Pool{New: func() any { return new(recvBlock) }}
)

func getSendBlock() *sendBlock  { return sendBlocks.Get().(*sendBlock) }
func putSendBlock(b *sendBlock) { sendBlocks.Put(b) }
func getRecvBlock() *recvBlock  { return recvBlocks.Get().(*recvBlock) }
func putRecvBlock(b *recvBlock) { recvBlocks.Put(b) }

// Received datagrams of a packet's size go into blocks of a pool too. A
// connection keeps a few batches of the buffers its application gave back
// (RecycleDatagram, maxRecycledDatagrams), but a tunnel's receive queues
// hold thousands at the peak of a burst, and each datagram beyond the
// connection's own spares was a fresh allocation, cleared, and garbage a
// moment later: at 2 Gbit/s through a tunnel that cost a twentieth of the
// receiving end's CPU. The blocks the connection cannot keep go back to
// the pool, which lets go of them when nobody asks.

// datagramBlockSize fits the DATAGRAM frame of any packet on a path with
// an Ethernet MTU; it is one of the Go allocator's size classes, so a
// block wastes nothing.
const datagramBlockSize = 1536

// smallDatagram is the largest datagram that gets a buffer of its own
// size rather than a block: a tunnel's inner TCP acknowledgements, which
// are cheap to allocate and would waste most of a block.
const smallDatagram = 256

type datagramBlock [datagramBlockSize]byte

var datagramBlocks = sync.Pool{New: func() any { return new(datagramBlock) }}

func getDatagramBlock() []byte          { return datagramBlocks.Get().(*datagramBlock)[:] }
func putDatagramBlock(b *datagramBlock) { datagramBlocks.Put(b) }
