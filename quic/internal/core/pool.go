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
