//go:build linux

package emulate

import (
	"sync"

	"github.com/satquic/satquic/emulate/internal/rtio"
)

// bufferClasses are the capacities of pooled packet buffers: a packet is
// copied out of the large read buffer into the smallest class that holds
// it, so that a second of queue at 250 Mbit/s holds 30 MB, not 2 GB.
var bufferClasses = [...]int{2048, 9216, 65536 + 64}

// maxFreeBuffers bounds what each class keeps for reuse.
const maxFreeBuffers = 8192

// bufferPool recycles packet buffers between the readers, which fill them,
// and the senders, which are done with them once written.
type bufferPool struct {
	mu   sync.Mutex
	free [len(bufferClasses)][][]byte
}

// get returns an empty buffer with room for n bytes.
func (p *bufferPool) get(n int) []byte {
	for i, size := range bufferClasses {
		if n > size {
			continue
		}
		rtio.SpinLock(&p.mu)
		if k := len(p.free[i]); k > 0 {
			b := p.free[i][k-1]
			p.free[i][k-1] = nil
			p.free[i] = p.free[i][:k-1]
			p.mu.Unlock()
			return b[:0]
		}
		p.mu.Unlock()
		return make([]byte, 0, size)
	}
	return make([]byte, 0, n)
}

// put takes back a buffer that nothing refers to any more. Buffers not of a
// class (copies the model made) are left to the garbage collector.
func (p *bufferPool) put(b []byte) {
	for i, size := range bufferClasses {
		if cap(b) != size {
			continue
		}
		rtio.SpinLock(&p.mu)
		if len(p.free[i]) < maxFreeBuffers {
			p.free[i] = append(p.free[i], b[:0])
		}
		p.mu.Unlock()
		return
	}
}
